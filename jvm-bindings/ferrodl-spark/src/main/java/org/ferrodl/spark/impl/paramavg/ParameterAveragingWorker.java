package org.ferrodl.spark.impl.paramavg;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.common.primitives.Pair;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.TrainingWorker;
import org.ferrodl.spark.api.WorkerConfiguration;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.PrefetchingIterator;
import org.ferrodl.spark.impl.common.TaskThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The executor side of one parameter-averaging split: rebuilds the network from the broadcast
 * snapshot, fits minibatches of exactly {@code batchSizePerWorker} examples (the last may be
 * smaller) from all of this partition's share (with balanced shares and accurate
 * {@code rddDataSetNumExamples} that is {@code averagingFrequency} minibatches; a kept RDD
 * partition may hold more or fewer) (in position order; objects that are paths are loaded one
 * at a time as the minibatches need them), runs the hooks around each update, and returns its
 * parameters. An empty share returns nothing, so empty partitions never disturb the average. The
 * native network is closed before the task ends, whatever happens. One class for both network
 * types: what differs is behind {@link NetworkKind}.
 *
 * <p>It is also what {@code ParameterAveragingTrainingMaster.getWorkerInstance(network)} returns,
 * with the reference's {@link TrainingWorker} methods: {@code getInitialModel()} restores the
 * broadcast network (listeners attached), {@code processMinibatch} runs the hooks and one fit and,
 * on the last minibatch, returns the task's {@link AveragingAggregate}, which merge with
 * {@link AveragingAggregate#add} and give the average with {@link AveragingAggregate#getParameters()}.
 * Both paths fit a minibatch and build the result with the same code ({@code fitOne},
 * {@code result}).
 *
 * @param <N> the network type
 * @param <B> its minibatch type (DataSet, MultiDataSet)
 * @param <T> B, or a reference that {@code loader} turns into one
 */
public final class ParameterAveragingWorker<N extends NativeHandleOwner & Model, B, T>
        implements Function2<Integer, Iterator<Tuple2<Placed, T>>, Iterator<AveragingAggregate>>,
        TrainingWorker<AveragingAggregate> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ParameterAveragingWorker.class);

    private final NetworkKind<N, B> kind;
    private final Broadcast<NetworkSnapshot<N>> snapshot;
    private final Function<T, B> loader;
    private final int batchSizePerWorker;
    private final int prefetchNumBatches;
    private final int split;
    private final boolean returnUpdater;
    private final boolean collectStats;
    private final int dataSetObjectSizeExamples;
    private final List<TrainingHook> hooks;
    private final List<TrainingListener> listeners;
    /** The reference-style use of this worker (getInitialModel, processMinibatch): its running totals. */
    private transient Tally tally;

    ParameterAveragingWorker(NetworkKind<N, B> kind, Broadcast<NetworkSnapshot<N>> snapshot, Function<T, B> loader,
                             int batchSizePerWorker,
                             int prefetchNumBatches, int split, boolean returnUpdater,
                             boolean collectStats, List<TrainingHook> hooks, List<TrainingListener> listeners,
                             int dataSetObjectSizeExamples) {
        this.kind = kind;
        this.snapshot = snapshot;
        this.loader = loader;
        this.batchSizePerWorker = batchSizePerWorker;
        this.prefetchNumBatches = prefetchNumBatches;
        this.split = split;
        this.returnUpdater = returnUpdater;
        this.collectStats = collectStats;
        this.dataSetObjectSizeExamples = dataSetObjectSizeExamples;
        this.hooks = new ArrayList<>(hooks);
        this.listeners = new ArrayList<>(listeners);
    }

    @Override
    public NetworkKind<?, ?> getNetworkKind() {
        return kind;
    }

    @Override
    public Iterator<AveragingAggregate> call(Integer partition, Iterator<Tuple2<Placed, T>> share) {
        TaskThreads.configure(1);
        // a shuffle does not keep order inside a partition: restore the position order.
        List<Tuple2<Placed, T>> items = new ArrayList<>();
        share.forEachRemaining(items::add);
        if (items.isEmpty()) {
            return Collections.emptyIterator();
        }
        items.sort(Comparator.comparingLong(t -> t._1().position()));
        Iterator<Tuple2<Placed, T>> ordered = items.iterator();
        Iterator<B> data = new Iterator<>() {
            @Override
            public boolean hasNext() {
                return ordered.hasNext();
            }

            @Override
            @SuppressWarnings("unchecked")
            public B next() {
                T item = ordered.next()._2();
                try {
                    return loader == null ? (B) item : loader.call(item);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("cannot load " + item + ": " + e.getMessage(), e);
                }
            }
        };

        Tally run = new Tally();
        long t = System.nanoTime();
        Iterator<B> batches = new BatchAssembler<>(data, batchSizePerWorker, kind);
        PrefetchingIterator<B> prefetch = prefetchNumBatches > 0
                ? new PrefetchingIterator<>(batches, prefetchNumBatches, "ferrodl-prefetch-p" + partition) : null;
        if (prefetch != null) {
            batches = prefetch;
        }
        try (N net = snapshot.value().restore()) {
            if (!listeners.isEmpty()) {
                net.setListeners(listeners);
            }
            run.restored(System.nanoTime() - t, kind.iterationCount(net));
            while (true) {
                t = System.nanoTime();
                B batch = batches.hasNext() ? batches.next() : null;
                run.dataNanos += System.nanoTime() - t;
                if (batch == null) {
                    break;
                }
                fitOne(net, batch, run);
            }
            AveragingAggregate result = result(net, partition, run);
            LOG.info("ferrodl-worker executor={} partition={} minibatches={} split={} examples={} score={}",
                    executorId(), partition, run.minibatches, split, run.examples, run.lastScore);
            return Collections.singletonList(result).iterator();
        } finally {
            if (prefetch != null) {
                prefetch.close();
            }
        }
    }

    /** The hooks, one fit and the counts, for one minibatch (both the Spark task and processMinibatch). */
    private void fitOne(N net, B batch, Tally run) {
        long t = System.nanoTime();
        for (TrainingHook h : hooks) {
            kind.preUpdate(h, batch, net);
        }
        kind.fit(net, batch);
        for (TrainingHook h : hooks) {
            kind.postUpdate(h, batch, net);
        }
        run.lastScore = net.score();
        run.fitNanos += System.nanoTime() - t;
        run.examples += kind.numExamples(batch);
        run.minibatches++;
    }

    /** This worker's parameters (and updater state when averaged) and counts, as sent to the driver. */
    private AveragingAggregate result(N net, int partition, Tally run) {
        long t = System.nanoTime();
        float[] params = net.params().toFloatVector();
        float[] updater = returnUpdater ? kind.updaterState(net).toFloatVector() : null;
        long resultNanos = System.nanoTime() - t;
        long[] nativeBytes = collectStats ? NativeInfo.nativeMemoryBytes() : null;
        WorkerStats stats = collectStats ? new WorkerStats(split, partition, executorId(), run.minibatches,
                (int) run.examples, run.startMillis, run.restoreNanos / 1_000_000, run.dataNanos / 1_000_000,
                run.fitNanos / 1_000_000, resultNanos / 1_000_000, run.lastScore, nativeBytes[0], nativeBytes[1])
                : null;
        return AveragingAggregate.ofWorker(params, updater, run.lastScore, run.minibatches,
                kind.iterationCount(net) - run.startIteration, run.examples, stats);
    }

    /** Running totals of one worker task. */
    private static final class Tally {
        final long startMillis = System.currentTimeMillis();
        long restoreNanos;
        int startIteration;
        long dataNanos;
        long fitNanos;
        int minibatches;
        long examples;
        double lastScore = Double.NaN;

        void restored(long nanos, int iteration) {
            restoreNanos = nanos;
            startIteration = iteration;
        }
    }

    // ------------------------------------------------- the reference's TrainingWorker methods

    @Override
    public void addHook(TrainingHook trainingHook) {
        hooks.add(java.util.Objects.requireNonNull(trainingHook, "trainingHook"));
    }

    @Override
    public void removeHook(TrainingHook trainingHook) {
        hooks.remove(trainingHook);
    }

    @Override
    public MultiLayerNetwork getInitialModel() {
        return initialModel(NetworkKind.MULTI_LAYER);
    }

    @Override
    public ComputationGraph getInitialModelGraph() {
        return initialModel(NetworkKind.GRAPH);
    }

    /** Restores the broadcast network (with the listeners) and starts this task's totals. */
    @SuppressWarnings("unchecked")
    private <M> M initialModel(NetworkKind<?, ?> wanted) {
        requireKind(wanted, wanted == NetworkKind.GRAPH ? "getInitialModelGraph()" : "getInitialModel()");
        long t = System.nanoTime();
        Tally run = new Tally();
        N net = snapshot.value().restore();
        if (!listeners.isEmpty()) {
            net.setListeners(listeners);
        }
        run.restored(System.nanoTime() - t, kind.iterationCount(net));
        tally = run;
        return (M) net;
    }

    private void requireKind(NetworkKind<?, ?> wanted, String method) {
        if (kind != wanted) {
            throw new IllegalStateException("ParameterAveragingWorker." + method + ": this worker trains a "
                    + kind.networkName() + " (from getWorkerInstance of a "
                    + (kind == NetworkKind.GRAPH ? "SparkComputationGraph" : "SparkDl4jMultiLayer")
                    + "), not a " + wanted.networkName());
        }
    }

    private Tally tally(String method) {
        if (tally == null) {
            throw new IllegalStateException("ParameterAveragingWorker." + method + ": call getInitialModel() or "
                    + "getInitialModelGraph() first (it restores the network and starts this task's counts)");
        }
        return tally;
    }

    @Override
    public AveragingAggregate processMinibatch(DataSet dataSet, MultiLayerNetwork network, boolean isLast) {
        requireKind(NetworkKind.MULTI_LAYER, "processMinibatch(DataSet, MultiLayerNetwork, boolean)");
        return process(dataSet, network, isLast);
    }

    @Override
    public AveragingAggregate processMinibatch(DataSet dataSet, ComputationGraph graph, boolean isLast) {
        return processMinibatch(MultiDataSet.fromDataSet(dataSet), graph, isLast);
    }

    @Override
    public AveragingAggregate processMinibatch(MultiDataSet dataSet, ComputationGraph graph, boolean isLast) {
        requireKind(NetworkKind.GRAPH, "processMinibatch(MultiDataSet, ComputationGraph, boolean)");
        return process(dataSet, graph, isLast);
    }

    @SuppressWarnings("unchecked")
    private AveragingAggregate process(Object batch, Object network, boolean isLast) {
        java.util.Objects.requireNonNull(batch, "dataSet");
        java.util.Objects.requireNonNull(network, "network");
        Tally run = tally("processMinibatch");
        fitOne((N) network, (B) batch, run);
        return isLast ? result((N) network, taskPartition(), run) : null;
    }

    @Override
    public Pair<AveragingAggregate, SparkTrainingStats> processMinibatchWithStats(DataSet dataSet,
                                                                                MultiLayerNetwork network,
                                                                                boolean isLast) {
        return withStats(processMinibatch(dataSet, network, isLast));
    }

    @Override
    public Pair<AveragingAggregate, SparkTrainingStats> processMinibatchWithStats(DataSet dataSet,
                                                                                ComputationGraph graph,
                                                                                boolean isLast) {
        return withStats(processMinibatch(dataSet, graph, isLast));
    }

    @Override
    public Pair<AveragingAggregate, SparkTrainingStats> processMinibatchWithStats(MultiDataSet dataSet,
                                                                                ComputationGraph graph,
                                                                                boolean isLast) {
        return withStats(processMinibatch(dataSet, graph, isLast));
    }

    @Override
    public AveragingAggregate getFinalResult(MultiLayerNetwork network) {
        requireKind(NetworkKind.MULTI_LAYER, "getFinalResult(MultiLayerNetwork)");
        return finalResult(network);
    }

    @Override
    public AveragingAggregate getFinalResult(ComputationGraph graph) {
        requireKind(NetworkKind.GRAPH, "getFinalResult(ComputationGraph)");
        return finalResult(graph);
    }

    @SuppressWarnings("unchecked")
    private AveragingAggregate finalResult(Object network) {
        return result((N) java.util.Objects.requireNonNull(network, "network"), taskPartition(),
                tally("getFinalResult"));
    }

    /** Nothing to average: merging it into other results changes nothing. */
    @Override
    public AveragingAggregate getFinalResultNoData() {
        return AveragingAggregate.empty();
    }

    @Override
    public Pair<AveragingAggregate, SparkTrainingStats> getFinalResultNoDataWithStats() {
        return Pair.of(getFinalResultNoData(), null);
    }

    @Override
    public Pair<AveragingAggregate, SparkTrainingStats> getFinalResultWithStats(MultiLayerNetwork network) {
        return withStats(getFinalResult(network));
    }

    @Override
    public Pair<AveragingAggregate, SparkTrainingStats> getFinalResultWithStats(ComputationGraph graph) {
        return withStats(getFinalResult(graph));
    }

    /** The result with this task's statistics (null when they are not collected); null for null. */
    private static Pair<AveragingAggregate, SparkTrainingStats> withStats(AveragingAggregate result) {
        if (result == null) {
            return null;
        }
        SparkTrainingStats stats = null;
        if (!result.stats.isEmpty()) {
            stats = new SparkTrainingStats();
            result.stats.forEach(stats::addWorker);
        }
        return Pair.of(result, stats);
    }

    @Override
    public WorkerConfiguration getDataConfiguration() {
        return new WorkerConfiguration(kind.isGraph(), dataSetObjectSizeExamples, batchSizePerWorker, 0,
                prefetchNumBatches, collectStats);
    }

    /** Not used by parameter averaging (as the reference). */
    @Override
    public long getInstanceId() {
        return 0;
    }

    private static int taskPartition() {
        TaskContext task = TaskContext.get();
        return task == null ? -1 : task.partitionId();
    }

    static String executorId() {
        SparkEnv env = SparkEnv.get();
        return env == null ? "unknown" : env.executorId();
    }
}
