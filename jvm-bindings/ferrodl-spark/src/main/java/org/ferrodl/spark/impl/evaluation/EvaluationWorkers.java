package org.ferrodl.spark.impl.evaluation;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reference's "evaluation workers": at most N networks evaluate at the same time in one
 * executor JVM, however many Spark task slots the executor has, so a large network is not
 * instantiated once per core. Tasks beyond N wait for a free worker. The limit is per executor
 * JVM and per value of N (evaluations asking for the same N share its slots).
 */
public final class EvaluationWorkers {
    private static final ConcurrentHashMap<Integer, Semaphore> SLOTS = new ConcurrentHashMap<>();
    private static final AtomicInteger ACTIVE = new AtomicInteger();
    private static final AtomicInteger MAX_ACTIVE = new AtomicInteger();

    private EvaluationWorkers() {
    }

    /** Blocks until one of the {@code workers} slots of this JVM is free and takes it. */
    static Slot acquire(int workers) {
        Semaphore s = SLOTS.computeIfAbsent(workers, w -> new Semaphore(w, true));
        s.acquireUninterruptibly();
        int now = ACTIVE.incrementAndGet();
        MAX_ACTIVE.accumulateAndGet(now, Math::max);
        return new Slot(s);
    }

    /**
     * Diagnostics: the most networks that evaluated at once in this JVM since the last call, which
     * resets it (used by tests in local mode, where driver and executors share the JVM).
     */
    public static int takeMaxConcurrent() {
        return MAX_ACTIVE.getAndSet(ACTIVE.get());
    }

    /** A taken slot; closing it frees the slot. */
    static final class Slot implements AutoCloseable {
        private final Semaphore semaphore;
        private boolean closed;

        private Slot(Semaphore semaphore) {
            this.semaphore = semaphore;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                ACTIVE.decrementAndGet();
                semaphore.release();
            }
        }
    }
}
