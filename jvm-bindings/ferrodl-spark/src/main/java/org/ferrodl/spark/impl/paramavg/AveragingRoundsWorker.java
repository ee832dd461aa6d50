package org.ferrodl.spark.impl.paramavg;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.TaskKilledException;
import org.apache.spark.api.java.function.Function;
import org.ferrodl.jni.NativeAveraging;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.impl.common.BalancedSplitter;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.PrefetchingIterator;
import org.ferrodl.spark.impl.common.TaskThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.runtime.AbstractFunction1;

/**
 * One worker task of a parameter-averaging fit whose rounds run inside one Spark (barrier) job
 * ({@link AveragingRounds}): restores the network once, then for every split fits its share in
 * minibatches of {@code batchSizePerWorker} (exactly as {@link ParameterAveragingWorker} does for
 * one split), sends its parameters and updater state through the driver's relay, waits for every
 * other worker's, and continues from their average — the average the driver would have computed,
 * with the same counters and, without {@code saveUpdater}, a fresh updater state each round.
 *
 * @param <N> the network type
 * @param <B> its minibatch type
 * @param <T> B, or a reference that {@code loader} turns into one
 */
final class AveragingRoundsWorker<N extends NativeHandleOwner & Model, B, T>
        extends AbstractFunction1<scala.collection.Iterator<Tuple2<Placed, T>>, scala.collection.Iterator<AveragingRoundsWorker.Result>>
        implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(AveragingRoundsWorker.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long one native wait lasts before the task checks whether Spark killed it. */
    private static final long WAIT_SLICE_MS = 100;

    /**
     * What every task of a fit receives inside the task itself (small): the network's configuration
     * and counters, and the relay. The parameters and updater state come from the relay at connect.
     */
    record Spec(String configurationJson, int paramCount, int iterationCount, int epochCount, String relayAddress,
                String secretHex, boolean encrypt, long relayTimeoutMs, long roundTimeoutMs,
                long maxMessageBytes, boolean keepNetworks) implements Serializable {
    }

    /** A task's report: counters and where its time went (ms), per phase summed over its rounds. */
    record Result(int partition, String executor, long startWallMillis, long endWallMillis, long minibatches,
                  long examples, double shareMillis, double restoreMillis, double connectMillis, double barrierMillis,
                  double dataMillis, double fitMillis,
                  double extractMillis, double exchangeMillis, double applyMillis, double[] roundMillis,
                  long[] wire, List<WorkerStats> stats) implements Serializable {
    }

    private final NetworkKind<N, B> kind;
    private final Spec spec;
    private final Function<T, B> loader;
    private final BalancedSplitter splitter;
    private final int workers;
    private final int batchSizePerWorker;
    private final int prefetchNumBatches;
    private final boolean saveUpdater;
    private final boolean collectStats;
    private final List<TrainingHook> hooks;
    private final List<TrainingListener> listeners;

    AveragingRoundsWorker(NetworkKind<N, B> kind, Spec spec, Function<T, B> loader,
                          BalancedSplitter splitter, int workers, int batchSizePerWorker, int prefetchNumBatches,
                          boolean saveUpdater, boolean collectStats, List<TrainingHook> hooks,
                          List<TrainingListener> listeners) {
        this.kind = kind;
        this.spec = spec;
        this.loader = loader;
        this.splitter = splitter;
        this.workers = workers;
        this.batchSizePerWorker = batchSizePerWorker;
        this.prefetchNumBatches = prefetchNumBatches;
        this.saveUpdater = saveUpdater;
        this.collectStats = collectStats;
        this.hooks = new ArrayList<>(hooks);
        this.listeners = new ArrayList<>(listeners);
    }

    @Override
    public scala.collection.Iterator<Result> apply(scala.collection.Iterator<Tuple2<Placed, T>> share) {
        long startWall = System.currentTimeMillis();
        long shareStart = System.nanoTime();
        BarrierTaskContext ctx = BarrierTaskContext.get();
        int partition = ctx.partitionId();
        TaskThreads.configure(1);
        // this worker's objects of every split, in position order (a shuffle does not keep order)
        List<List<T>> rounds = new ArrayList<>();
        for (int s = 0; s < splitter.numSplits(); s++) {
            rounds.add(new ArrayList<>());
        }
        List<Tuple2<Placed, T>> items = new ArrayList<>();
        while (share.hasNext()) {
            items.add(share.next());
        }
        items.sort(Comparator.comparingLong(t -> t._1().position()));
        for (Tuple2<Placed, T> t : items) {
            rounds.get(splitter.splitOf(t._1().position())).add(t._2());
        }
        items = null;
        double shareRead = ms(shareStart);

        Spec s = spec;
        long t = System.nanoTime();
        double restore;
        double connect;
        double barrier;
        double data = 0;
        double fit = 0;
        double extract = 0;
        double exchange = 0;
        double apply = 0;
        long allMinibatches = 0;
        long allExamples = 0;
        List<WorkerStats> stats = collectStats ? new ArrayList<>() : null;
        String executor = ParameterAveragingWorker.executorId();
        long worker = NativeAveraging.connect(workerJson(s, partition, ctx));
        connect = ms(t);
        t = System.nanoTime();
        // a network of this configuration kept in this JVM by an earlier fit's task, or a new one
        String keptKey = s.keepNetworks() ? KeptNetworks.key(kind, s.configurationJson(), saveUpdater) : null;
        KeptNetworks.Kept kept = keptKey != null ? KeptNetworks.take(keptKey) : null;
        boolean keep = false;
        N net = null;
        float[] freshUpdater = null;
        try (WorkerHandle closing = new WorkerHandle(worker)) {
            @SuppressWarnings("unchecked")
            N reused = kept == null ? null : (N) kept.network();
            net = reused != null ? reused : kind.create(s.configurationJson(), new float[s.paramCount()]);
            // the driver's parameters (and updater state) as the relay handed them over at connect;
            // the training RNG from the configuration's seed, as in a new network
            NativeAveraging.restoreStart(worker, net.nativeHandle(), saveUpdater);
            kind.setCounters(net, s.iterationCount(), s.epochCount());
            if (!listeners.isEmpty()) {
                net.setListeners(listeners);
            }
            // without saveUpdater every split starts from a fresh updater, as a restored network does
            freshUpdater = reused != null ? kept.freshUpdater()
                    : saveUpdater ? null : kind.updaterState(net).toFloatVector();
            int epoch = kind.epochCount(net);
            double[] roundMillis = new double[rounds.size()];
            restore = ms(t);
            {
                t = System.nanoTime();
                // every worker is connected before any round message is sent (the relay forwards a
                // message only to the connections it has when the message arrives); through the relay
                // rather than ctx.barrier(), which checks for its answer once a second
                awaitPeers(worker, s.roundTimeoutMs(), ctx);
                barrier = ms(t);
                for (int round = 0; round < rounds.size(); round++) {
                    long roundStartWall = System.currentTimeMillis();
                    long roundStart = System.nanoTime();
                    int startIteration = kind.iterationCount(net);
                    double roundData = 0;
                    double roundFit = 0;
                    int minibatches = 0;
                    long examples = 0;
                    double lastScore = Double.NaN;
                    Iterator<B> batches = new BatchAssembler<>(loading(rounds.get(round)), batchSizePerWorker, kind);
                    // minibatch objects already in memory need no loading ahead (a prefetch thread per
                    // round only adds a hand-off per minibatch); references to load do
                    PrefetchingIterator<B> prefetch = prefetchNumBatches > 0 && loader != null
                            && !rounds.get(round).isEmpty()
                            ? new PrefetchingIterator<>(batches, prefetchNumBatches, "ferrodl-prefetch-p" + partition)
                            : null;
                    if (prefetch != null) {
                        batches = prefetch;
                    }
                    try {
                        while (true) {
                            t = System.nanoTime();
                            B batch = batches.hasNext() ? batches.next() : null;
                            roundData += ms(t);
                            if (batch == null) {
                                break;
                            }
                            t = System.nanoTime();
                            for (TrainingHook h : hooks) {
                                kind.preUpdate(h, batch, net);
                            }
                            kind.fit(net, batch);
                            for (TrainingHook h : hooks) {
                                kind.postUpdate(h, batch, net);
                            }
                            lastScore = net.score();
                            roundFit += ms(t);
                            examples += kind.numExamples(batch);
                            minibatches++;
                        }
                    } finally {
                        if (prefetch != null) {
                            prefetch.close();
                        }
                    }
                    // sent straight from the engine's arrays and averaged back into them (no Java copies)
                    t = System.nanoTime();
                    NativeAveraging.sendRound(worker, net.nativeHandle(), round, kind.iterationCount(net) - startIteration,
                            minibatches, examples, lastScore, minibatches > 0, minibatches > 0 && saveUpdater);
                    double roundExtract = ms(t);
                    t = System.nanoTime();
                    awaitRound(worker, round, s.roundTimeoutMs(), ctx);
                    double roundExchange = ms(t);
                    t = System.nanoTime();
                    if (NativeAveraging.applyAverage(worker, net.nativeHandle(), saveUpdater) != 0) {
                        // the driver's per-split design: the average, its updater state (or a fresh one
                        // without saveUpdater), counters + the most iterations
                        if (!saveUpdater) {
                            kind.setUpdaterState(net, new NDArray(freshUpdater, 1, freshUpdater.length));
                        }
                        double[] summary = NativeAveraging.averageSummary(worker);
                        kind.setCounters(net, startIteration + (int) summary[1], epoch);
                    }
                    double roundApply = ms(t);
                    roundMillis[round] = ms(roundStart);
                    data += roundData;
                    fit += roundFit;
                    extract += roundExtract;
                    exchange += roundExchange;
                    apply += roundApply;
                    allMinibatches += minibatches;
                    allExamples += examples;
                    if (stats != null && minibatches > 0) {
                        long[] nativeBytes = NativeInfo.nativeMemoryBytes();
                        stats.add(new WorkerStats(round, partition, executor, minibatches, (int) examples,
                                roundStartWall, Math.round(round == 0 ? restore + connect + barrier : 0), Math.round(roundData),
                                Math.round(roundFit), Math.round(roundExtract + roundExchange + roundApply), lastScore,
                                nativeBytes[0], nativeBytes[1]));
                    }
                    LOG.info("ferrodl-worker executor={} partition={} minibatches={} split={} examples={} score={}",
                            executor, partition, minibatches, round, examples, lastScore);
                }
                long[] wire = NativeAveraging.finish(worker);
                Result result = new Result(partition, executor, startWall,
                        System.currentTimeMillis(), allMinibatches, allExamples, shareRead, restore, connect, barrier, data, fit,
                        extract,
                        exchange, apply, roundMillis, wire, stats == null ? Collections.emptyList() : stats);
                keep = s.keepNetworks();
                return scala.collection.Iterator$.MODULE$.single(result);
            }
        } finally {
            // after a failure the network's state is unknown: only a fit that succeeded keeps it
            if (keep) {
                // kept without the finished fit's listeners (the next task attaches its own)
                if (!listeners.isEmpty()) {
                    net.setListeners(Collections.emptyList());
                }
                KeptNetworks.keep(keptKey, net, freshUpdater);
            } else if (net != null) {
                net.close();
            }
        }
    }

    /** Releases the worker's connection when the task ends (closed after the network). */
    private record WorkerHandle(long handle) implements AutoCloseable {
        @Override
        public void close() {
            NativeAveraging.destroyWorker(handle);
        }
    }

    /** Waits until every worker is connected, giving up when Spark kills the task or after the timeout. */
    private static void awaitPeers(long worker, long timeoutMs, BarrierTaskContext ctx) {
        long start = System.nanoTime();
        while (!NativeAveraging.awaitPeers(worker, WAIT_SLICE_MS)) {
            if (ctx.isInterrupted() || Thread.currentThread().isInterrupted()) {
                throw new TaskKilledException("parameter averaging: cancelled while waiting for the other workers");
            }
            if ((System.nanoTime() - start) / 1_000_000 > timeoutMs) {
                throw new IllegalStateException("parameter averaging: worker " + ctx.partitionId() + " waited "
                        + timeoutMs + " ms for the other workers to connect to the driver's relay (stalled or "
                        + "lost executors? the timeout is " + AveragingRounds.ROUND_TIMEOUT_MS + ")");
            }
        }
    }

    /** Waits for every worker's message of {@code round}, giving up when Spark kills the task or after the timeout. */
    private static void awaitRound(long worker, int round, long timeoutMs, BarrierTaskContext ctx) {
        long start = System.nanoTime();
        while (!NativeAveraging.awaitRound(worker, round, WAIT_SLICE_MS)) {
            if (ctx.isInterrupted() || Thread.currentThread().isInterrupted()) {
                throw new TaskKilledException("parameter averaging round " + round + " cancelled");
            }
            if ((System.nanoTime() - start) / 1_000_000 > timeoutMs) {
                long[] missing = NativeAveraging.missing(worker, round);
                throw new IllegalStateException("parameter averaging: worker " + ctx.partitionId() + " waited "
                        + timeoutMs + " ms in round " + round + " for the parameters of worker(s) "
                        + java.util.Arrays.toString(missing) + " (stalled or lost executors? the timeout is the "
                        + "master's relay timeout)");
            }
        }
    }

    private Iterator<B> loading(List<T> objects) {
        Iterator<T> it = objects.iterator();
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            @SuppressWarnings("unchecked")
            public B next() {
                T item = it.next();
                try {
                    return loader == null ? (B) item : loader.call(item);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("cannot load " + item + ": " + e.getMessage(), e);
                }
            }
        };
    }

    private String workerJson(Spec s, int partition, BarrierTaskContext ctx) {
        ObjectNode o = JSON.createObjectNode();
        o.put("relayAddress", s.relayAddress());
        o.put("secretHex", s.secretHex());
        o.put("partition", partition);
        // a retried stage's tasks must supersede the old stage's connections: attempts grow across stages
        o.put("attempt", ctx.stageAttemptNumber() * 65_536L + ctx.attemptNumber());
        o.put("stage", ctx.stageAttemptNumber());
        o.put("workers", workers);
        o.put("connectTimeoutMs", Math.min(s.relayTimeoutMs(), 30_000L));
        o.put("ioTimeoutMs", s.relayTimeoutMs());
        o.put("queueLimit", 4);
        o.put("maxMessageBytes", s.maxMessageBytes());
        o.put("encrypt", s.encrypt());
        return o.toString();
    }

    private static double ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e6;
    }
}
