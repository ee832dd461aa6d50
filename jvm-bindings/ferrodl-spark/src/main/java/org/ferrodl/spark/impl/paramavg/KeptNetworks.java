package org.ferrodl.spark.impl.paramavg;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Worker networks kept in this JVM (an executor's, or the driver's on local[N]) from one
 * parameter-averaging fit to the next, by configuration: building a task's network from its JSON
 * cost 12-36 ms per task and fit on the bench machines (2026-11-28, loaded task start), where the
 * fit's start state is written into it anyway. A task takes one that no other task holds, and gives
 * it back when its fit succeeded (a failed task closes its own). There are never more kept than
 * tasks ran at once, and a network unused for {@link #IDLE_MS} is closed, so an executor does not
 * hold native memory long after the fits end.
 */
final class KeptNetworks {
    /** A network kept longer than this without being taken again is closed. */
    static final long IDLE_MS = 30_000;

    /** A kept network with what its task needs besides it: its updater state as built. */
    record Kept(AutoCloseable network, float[] freshUpdater, long sinceNanos) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Deque<Kept>> KEPT = new HashMap<>();
    private static final AtomicLong REUSED = new AtomicLong();
    private static ScheduledExecutorService sweeper;

    private KeptNetworks() {
    }

    /**
     * What a kept network serves: the network type, the configuration without its counters (every
     * fit's JSON carries the driver's iteration and epoch counts, which the task sets itself) and
     * whether the updater state is averaged (a kept network's fresh updater state is kept only
     * without it).
     */
    static String key(Object kind, String configurationJson, boolean saveUpdater) {
        JsonNode conf;
        try {
            conf = JSON.readTree(configurationJson);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("network configuration JSON: " + e.getOriginalMessage(), e);
        }
        if (conf instanceof ObjectNode o) {
            o.remove("iterationCount");
            o.remove("epochCount");
        }
        return kind.getClass().getName() + (saveUpdater ? " +updater " : " -updater ") + conf;
    }

    /** A kept network of this configuration, now the caller's; null when none is kept. */
    static synchronized Kept take(String key) {
        Deque<Kept> q = KEPT.get(key);
        Kept k = q == null ? null : q.pollLast();
        if (q != null && q.isEmpty()) {
            KEPT.remove(key);
        }
        if (k != null) {
            REUSED.incrementAndGet();
        }
        return k;
    }

    /** Keeps a network its task is done with (the next fit of the same configuration takes it). */
    static void keep(String key, AutoCloseable network, float[] freshUpdater) {
        synchronized (KeptNetworks.class) {
            KEPT.computeIfAbsent(key, x -> new ArrayDeque<>()).addLast(new Kept(network, freshUpdater, System.nanoTime()));
            if (sweeper == null) {
                sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "ferrodl-kept-networks");
                    t.setDaemon(true);
                    return t;
                });
                sweeper.scheduleWithFixedDelay(() -> close(IDLE_MS), IDLE_MS / 2, IDLE_MS / 2, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Closes every network kept for at least {@code idleMs}; 0 closes them all. */
    static void close(long idleMs) {
        List<Kept> idle = new ArrayList<>();
        long now = System.nanoTime();
        synchronized (KeptNetworks.class) {
            for (Iterator<Deque<Kept>> qs = KEPT.values().iterator(); qs.hasNext(); ) {
                Deque<Kept> q = qs.next();
                q.removeIf(k -> now - k.sinceNanos() >= TimeUnit.MILLISECONDS.toNanos(idleMs) && idle.add(k));
                if (q.isEmpty()) {
                    qs.remove();
                }
            }
        }
        for (Kept k : idle) {
            try {
                k.network().close();
            } catch (Exception e) {
                // a network that cannot close has nothing left to release
            }
        }
    }

    /** How many networks are kept now. */
    static synchronized int size() {
        return KEPT.values().stream().mapToInt(Deque::size).sum();
    }

    /** How many times a task took a kept network (since this JVM started). */
    static long reused() {
        return REUSED.get();
    }
}
