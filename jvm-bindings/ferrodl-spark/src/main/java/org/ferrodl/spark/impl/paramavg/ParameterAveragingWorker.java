package org.ferrodl.spark.impl.paramavg;

import org.ferrodl.spark.impl.common.TaskThreads;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.PrefetchingIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The executor side of one parameter-averaging split: rebuilds the network from the broadcast
 * snapshot, fits up to {@code averagingFrequency} minibatches of exactly {@code batchSizePerWorker}
 * examples from this partition's share (in position order), and returns its parameters. An empty
 * share returns nothing, so empty partitions never disturb the average. The native network is
 * closed before the task ends, whatever happens.
 */
final class ParameterAveragingWorker
        implements Function2<Integer, Iterator<Tuple2<Long, DataSet>>, Iterator<AveragingAggregate>> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ParameterAveragingWorker.class);

    private final Broadcast<NetworkSnapshot> snapshot;
    private final int batchSizePerWorker;
    private final int averagingFrequency;
    private final int prefetchNumBatches;
    private final int split;
    private final boolean returnUpdater;
    private final boolean collectStats;

    ParameterAveragingWorker(Broadcast<NetworkSnapshot> snapshot, int batchSizePerWorker, int averagingFrequency,
                             int prefetchNumBatches, int split, boolean returnUpdater, boolean collectStats) {
        this.snapshot = snapshot;
        this.batchSizePerWorker = batchSizePerWorker;
        this.averagingFrequency = averagingFrequency;
        this.prefetchNumBatches = prefetchNumBatches;
        this.split = split;
        this.returnUpdater = returnUpdater;
        this.collectStats = collectStats;
    }

    @Override
    public Iterator<AveragingAggregate> call(Integer partition, Iterator<Tuple2<Long, DataSet>> share) {
        TaskThreads.configure(1);
        // partitionBy does not keep order inside a partition: restore the position order.
        List<Tuple2<Long, DataSet>> items = new ArrayList<>();
        share.forEachRemaining(items::add);
        if (items.isEmpty()) {
            return Collections.emptyIterator();
        }
        items.sort(Comparator.comparing(Tuple2::_1));
        List<DataSet> data = new ArrayList<>(items.size());
        for (Tuple2<Long, DataSet> t : items) {
            data.add(t._2());
        }

        long start = System.currentTimeMillis();
        Iterator<DataSet> batches = new BatchAssembler(data.iterator(), batchSizePerWorker);
        PrefetchingIterator<DataSet> prefetch = prefetchNumBatches > 0
                ? new PrefetchingIterator<>(batches, prefetchNumBatches, "ferrodl-prefetch-p" + partition) : null;
        if (prefetch != null) {
            batches = prefetch;
        }
        try (MultiLayerNetwork net = snapshot.value().restore()) {
            int minibatches = 0;
            long examples = 0;
            double lastScore = Double.NaN;
            while (minibatches < averagingFrequency && batches.hasNext()) {
                DataSet batch = batches.next();
                net.fit(batch);
                lastScore = net.score();
                examples += batch.numExamples();
                minibatches++;
            }
            String executor = executorId();
            LOG.info("ferrodl-worker executor={} partition={} minibatches={} split={} examples={} score={}",
                    executor, partition, minibatches, split, examples, lastScore);
            WorkerStats stats = collectStats ? new WorkerStats(split, partition, executor, minibatches,
                    (int) examples, System.currentTimeMillis() - start, lastScore) : null;
            float[] updater = returnUpdater ? net.getUpdaterState().toFloatVector() : null;
            return Collections.singletonList(AveragingAggregate.ofWorker(net.params().toFloatVector(), updater,
                    lastScore, minibatches, examples, stats)).iterator();
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
