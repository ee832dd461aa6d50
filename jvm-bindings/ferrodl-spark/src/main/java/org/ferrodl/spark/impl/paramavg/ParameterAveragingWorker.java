package org.ferrodl.spark.impl.paramavg;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.TrainingWorker;
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
    private final List<TrainingHook> hooks;
    private final List<TrainingListener> listeners;

    ParameterAveragingWorker(NetworkKind<N, B> kind, Broadcast<NetworkSnapshot<N>> snapshot, Function<T, B> loader,
                             int batchSizePerWorker,
                             int prefetchNumBatches, int split, boolean returnUpdater,
                             boolean collectStats, List<TrainingHook> hooks, List<TrainingListener> listeners) {
        this.kind = kind;
        this.snapshot = snapshot;
        this.loader = loader;
        this.batchSizePerWorker = batchSizePerWorker;
        this.prefetchNumBatches = prefetchNumBatches;
        this.split = split;
        this.returnUpdater = returnUpdater;
        this.collectStats = collectStats;
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

        long start = System.currentTimeMillis();
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
            long restoreNanos = System.nanoTime() - t;
            int startIteration = kind.iterationCount(net);
            long dataNanos = 0;
            long fitNanos = 0;
            int minibatches = 0;
            long examples = 0;
            double lastScore = Double.NaN;
            while (true) {
                t = System.nanoTime();
                B batch = batches.hasNext() ? batches.next() : null;
                dataNanos += System.nanoTime() - t;
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
                fitNanos += System.nanoTime() - t;
                examples += kind.numExamples(batch);
                minibatches++;
            }
            t = System.nanoTime();
            float[] params = net.params().toFloatVector();
            float[] updater = returnUpdater ? kind.updaterState(net).toFloatVector() : null;
            long resultNanos = System.nanoTime() - t;
            String executor = executorId();
            LOG.info("ferrodl-worker executor={} partition={} minibatches={} split={} examples={} score={}",
                    executor, partition, minibatches, split, examples, lastScore);
            long[] nativeBytes = collectStats ? NativeInfo.nativeMemoryBytes() : null;
            WorkerStats stats = collectStats ? new WorkerStats(split, partition, executor, minibatches,
                    (int) examples, start, restoreNanos / 1_000_000, dataNanos / 1_000_000, fitNanos / 1_000_000,
                    resultNanos / 1_000_000, lastScore, nativeBytes[0], nativeBytes[1]) : null;
            return Collections.singletonList(AveragingAggregate.ofWorker(params, updater,
                    lastScore, minibatches, kind.iterationCount(net) - startIteration, examples, stats)).iterator();
        } finally {
            if (prefetch != null) {
                prefetch.close();
            }
        }
    }

    static String executorId() {
        SparkEnv env = SparkEnv.get();
        return env == null ? "unknown" : env.executorId();
    }
}
