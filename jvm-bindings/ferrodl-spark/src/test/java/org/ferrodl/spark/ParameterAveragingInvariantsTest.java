package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Stream;
import org.apache.spark.TaskContext;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** DESIGN.md §5 invariants 1–4 for ParameterAveragingTrainingMaster on local Spark. */
class ParameterAveragingInvariantsTest {

    /** Float rounding of ~100 f32 updates, with the average taken in double: 1e-5 is ample. */
    private static final float TOL = 1e-5f;

    static Stream<Arguments> updatersAndSaveUpdater() {
        return Stream.of(
                Arguments.of(new Sgd(0.1), true), Arguments.of(new Sgd(0.1), false),
                Arguments.of(new Adam(0.01), true), Arguments.of(new Nesterovs(0.05, 0.9), true));
    }

    /**
     * Invariant 1: one worker with default settings (Export, Always/Balanced, no seed) equals local
     * training on the same data in the same order, across several averaging rounds (12 DataSets of 4 examples, batch 8, averaging every 2 minibatches:
     * 3 splits). With saveUpdater=false only a stateless updater can match across rounds (the
     * updater restarts after each averaging, as documented); see the single-round test below.
     */
    @ParameterizedTest
    @MethodSource("updatersAndSaveUpdater")
    void oneWorkerEqualsLocalTraining(IUpdater updater, boolean saveUpdater) {
        MultiLayerConfiguration conf = conf(updater, 1e-3);
        List<DataSet> dataSets = data(12, 4, 11);

        MultiLayerNetwork local = net(conf);
        for (int i = 0; i < dataSets.size(); i += 2) {
            local.fit(DataSet.merge(dataSets.subList(i, i + 2)));
        }

        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                .batchSizePerWorker(8).averagingFrequency(2).saveUpdater(saveUpdater).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf, tm);
        MultiLayerNetwork trained = spark.fit(sc().parallelize(dataSets, 3));

        float diff = maxAbsDiff(local.params().toFloatVector(), trained.params().toFloatVector());
        assertTrue(diff <= TOL, "max |distributed - local| = " + diff);
        assertEquals(6, trained.getIterationCount(), "iterations = minibatches per worker");
        assertEquals(1, trained.getEpochCount(), "one epoch per fit call");
        assertEquals(local.score(), spark.getScore(), 1e-6, "score = the single worker's last minibatch score");
    }

    /** Invariant 1 with saveUpdater=false and a stateful updater: exact when one averaging round covers the fit. */
    @Test
    void oneWorkerWithoutSavedUpdaterEqualsLocalTrainingWithinOneRound() {
        MultiLayerConfiguration conf = conf(new Adam(0.01), 0);
        List<DataSet> dataSets = data(6, 4, 12);
        MultiLayerNetwork local = net(conf);
        for (int i = 0; i < dataSets.size(); i += 2) {
            local.fit(DataSet.merge(dataSets.subList(i, i + 2)));
        }
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                .batchSizePerWorker(8).averagingFrequency(3).saveUpdater(false).build();
        MultiLayerNetwork trained = new SparkDl4jMultiLayer(sc(), conf, tm).fit(sc().parallelize(dataSets, 2));
        float diff = maxAbsDiff(local.params().toFloatVector(), trained.params().toFloatVector());
        assertTrue(diff <= TOL, "max |distributed - local| = " + diff);
    }

    /**
     * Invariant 2: plain SGD averaged every step over N equal shards equals one local step on the
     * whole batch (the mean of N gradients of equal-size shards is the full-batch gradient).
     */
    @ParameterizedTest
    @MethodSource("workerCounts")
    void sgdAveragingEqualsOneFullBatchStep(int workers) {
        MultiLayerConfiguration conf = conf(new Sgd(0.5), 1e-2);
        List<DataSet> dataSets = data(workers * 2, 5, 21 + workers);

        MultiLayerNetwork local = net(conf);
        local.fit(DataSet.merge(dataSets));

        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(workers, 5)
                .batchSizePerWorker(10).averagingFrequency(1).rngSeed(99).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf, tm);
        MultiLayerNetwork trained = spark.fit(sc().parallelize(dataSets, 3));

        float diff = maxAbsDiff(local.params().toFloatVector(), trained.params().toFloatVector());
        assertTrue(diff <= TOL, workers + " workers: max |averaged - full batch| = " + diff);
        assertEquals(1, trained.getIterationCount());
    }

    static Stream<Integer> workerCounts() {
        return Stream.of(2, 3, 4);
    }

    /**
     * Invariant 3: getScore() is the mean over workers of each worker's last minibatch score. With
     * one minibatch per worker from the initial parameters, worker w's score is the initial
     * network's score on shard w (contiguous shares: the default Balanced repartitioning, no seed).
     */
    @Test
    void scoreIsMeanOfWorkersLastMinibatchScores() {
        MultiLayerConfiguration conf = conf(new Sgd(0.1), 1e-3);
        List<DataSet> dataSets = data(3, 6, 31);
        MultiLayerNetwork initial = net(conf);
        double expected = 0;
        for (DataSet shard : dataSets) {
            expected += initial.score(shard) / dataSets.size();
        }
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(3, 6)
                .batchSizePerWorker(6).averagingFrequency(1).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf, tm);
        spark.fit(sc().parallelize(dataSets, 2));
        assertEquals(expected, spark.getScore(), 1e-6);
        assertTrue(Double.isFinite(spark.getScore()));
    }

    /** (task partition, marker of the minibatch) of every minibatch a worker fitted (local[N]: one JVM). */
    static final ConcurrentLinkedQueue<float[]> SEEN = new ConcurrentLinkedQueue<>();

    /** Records which worker task fitted which object. */
    public static final class RecordingHook implements TrainingHook {
        private static final long serialVersionUID = 1L;

        @Override
        public void preUpdate(DataSet minibatch, Model model) {
            SEEN.add(new float[] {TaskContext.getPartitionId(), minibatch.getFeatures().getFloat(0L, 0L)});
        }

        @Override
        public void postUpdate(DataSet minibatch, Model model) {
        }
    }

    /** Per worker task, the markers of the objects it fitted in one fit of {@code rdd}. */
    private static List<Set<Integer>> fittedBy(JavaRDD<DataSet> rdd, Long seed) {
        ParameterAveragingTrainingMaster.Builder b = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(2).trainingHooks(new RecordingHook());
        if (seed != null) {
            b.rngSeed(seed);
        }
        SEEN.clear();
        new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), b.build()).fit(rdd);
        List<Set<Integer>> out = List.of(new HashSet<>(), new HashSet<>());
        for (float[] s : SEEN) {
            out.get((int) s[0]).add((int) s[1]);
        }
        return out;
    }

    /**
     * A persisted RDD with one partition per worker is trained in place (the reference's Balanced
     * repartitioning leaves correctly sized partitions where they are): worker w fits exactly the
     * objects of partition w, with or without a seed. An RDD that is not persisted keeps one order
     * whatever its partitioning: without a seed the first split's two shares are both partition 0's.
     */
    @Test
    void aCachedRddWithOnePartitionPerWorkerIsTrainedWhereItLies() {
        List<DataSet> objects = data(12, 4, 51);
        for (int i = 0; i < objects.size(); i++) {
            objects.get(i).getFeatures().putScalar(0, 0, 100 + i);
        }
        Set<Integer> first = new HashSet<>();
        Set<Integer> second = new HashSet<>();
        for (int i = 0; i < 6; i++) {
            first.add(100 + i);
            second.add(106 + i);
        }
        JavaRDD<DataSet> cached = sc().parallelize(objects, 2).persist(StorageLevel.MEMORY_ONLY());
        try {
            assertEquals(12, cached.count());
            for (Long seed : new Long[] {null, 3L}) {
                assertEquals(List.of(first, second), fittedBy(cached, seed), "seed " + seed);
            }
        } finally {
            cached.unpersist(true);
        }
        List<Set<Integer>> plain = fittedBy(sc().parallelize(objects, 2), null);
        assertEquals(Set.of(100, 101, 104, 105, 108, 109), plain.get(0));
        assertEquals(Set.of(102, 103, 106, 107, 110, 111), plain.get(1));
    }

    /** Invariant 4: iterations grow by minibatches per worker, epochs by one per fit call. */
    @Test
    void countersGrowByMinibatchesPerWorkerAndOneEpochPerFit() {
        MultiLayerConfiguration conf = conf(new Adam(0.01), 0);
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(3).rngSeed(5).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf, tm);
        // 16 objects of 4 examples, 2 workers × 3 minibatches per split: splits of 6, 6, 4 objects
        // -> minibatches per worker 3 + 3 + 2 = 8 per fit.
        JavaRDD<DataSet> rdd = sc().parallelize(data(16, 4, 41), 4);
        spark.fit(rdd);
        assertEquals(8, spark.getNetwork().getIterationCount());
        assertEquals(1, spark.getNetwork().getEpochCount());
        spark.fit(rdd);
        assertEquals(16, spark.getNetwork().getIterationCount());
        assertEquals(2, spark.getNetwork().getEpochCount());
    }
}
