package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ParameterAveragingTrainingMaster options: training approach, export directory, seed, repartitioning, hooks. */
class ParameterAveragingOptionsTest {

    private static float[] fit(ParameterAveragingTrainingMaster tm, JavaRDD<DataSet> rdd) {
        return new SparkDl4jMultiLayer(sc(), conf(new Adam(0.01), 1e-3), tm).fit(rdd).params().toFloatVector();
    }

    private static ParameterAveragingTrainingMaster.Builder oneWorker() {
        return new ParameterAveragingTrainingMaster.Builder(1, 4).batchSizePerWorker(8).averagingFrequency(2);
    }

    /** Default settings, one worker: local training (1e-5), with Export (default) and Direct alike. */
    @Test
    void oneWorkerWithDefaultsEqualsLocalTrainingForBothApproaches() {
        MultiLayerConfiguration conf = conf(new Adam(0.01), 1e-3);
        List<DataSet> ds = data(12, 4, 51);
        MultiLayerNetwork local = net(conf);
        for (int i = 0; i < ds.size(); i += 2) {
            local.fit(DataSet.merge(ds.subList(i, i + 2)));
        }
        JavaRDD<DataSet> rdd = sc().parallelize(ds, 3);
        float[] export = fit(oneWorker().build(), rdd);
        float[] direct = fit(oneWorker().rddTrainingApproach(RDDTrainingApproach.Direct).build(), rdd);
        assertTrue(maxAbsDiff(local.params().toFloatVector(), export) <= 1e-5f);
        assertArrayEquals(direct, export, "Export and Direct train on the same data in the same order");
    }

    /** Without a seed nothing is random; a seed shuffles repeatably, and different seeds differ. */
    @Test
    void fitsAreRepeatableAndTheSeedShufflesRepeatably() {
        JavaRDD<DataSet> rdd = sc().parallelize(data(16, 4, 52), 4);
        ParameterAveragingTrainingMaster.Builder b = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(2).rddTrainingApproach(RDDTrainingApproach.Direct);
        float[] plain = fit(b.build(), rdd);
        assertArrayEquals(plain, fit(b.build(), rdd), "two default fits are identical");
        float[] seeded = fit(b.rngSeed(42).build(), rdd);
        assertArrayEquals(seeded, fit(b.rngSeed(42).build(), rdd), "two fits with one seed are identical");
        assertTrue(maxAbsDiff(seeded, plain) > 1e-4f, "the seed shuffles the data");
        assertTrue(maxAbsDiff(seeded, fit(b.rngSeed(43).build(), rdd)) > 1e-4f, "another seed, another order");
    }

    private static Map<Integer, Integer> minibatchesByPartition(SparkTrainingStats stats) {
        Map<Integer, Integer> m = new TreeMap<>();
        for (SparkTrainingStats.WorkerStats w : stats.getWorkerStats()) {
            m.merge(w.partition(), w.minibatches(), Integer::sum);
        }
        return m;
    }

    /** An RDD of 4 objects (4 examples each) in partitions of 3 and 1 objects. */
    private static JavaRDD<DataSet> unevenPartitions() {
        List<DataSet> ds = data(4, 4, 53);
        return sc().parallelize(ds.subList(0, 3), 1).union(sc().parallelize(ds.subList(3, 4), 1));
    }

    private static SparkTrainingStats stats(int workers, Repartition r, RepartitionStrategy s) {
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(workers, 4)
                .batchSizePerWorker(4).averagingFrequency(2).repartionData(r).repartitionStrategy(s)
                .collectTrainingStats(true).build();
        new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), tm).fit(unevenPartitions());
        return tm.getTrainingStats();
    }

    @Test
    void repartitionModesFollowTheReferenceDefinitions() {
        // Never: each RDD partition is a worker, whatever numWorkers says
        assertEquals(Map.of(0, 3, 1, 1), minibatchesByPartition(stats(4, Repartition.Never, RepartitionStrategy.Balanced)));
        // Always + Balanced: equal shares of 2 objects for 2 workers
        assertEquals(Map.of(0, 2, 1, 2), minibatchesByPartition(stats(2, Repartition.Always, RepartitionStrategy.Balanced)));
        // NumPartitionsWorkersDiffers: 2 partitions == 2 workers -> kept; 4 workers -> balanced (1 object each)
        assertEquals(Map.of(0, 3, 1, 1), minibatchesByPartition(
                stats(2, Repartition.NumPartitionsWorkersDiffers, RepartitionStrategy.Balanced)));
        assertEquals(Map.of(0, 1, 1, 1, 2, 1, 3, 1), minibatchesByPartition(
                stats(4, Repartition.NumPartitionsWorkersDiffers, RepartitionStrategy.Balanced)));
        // SparkDefault: Spark's repartition; every object is trained on, and the dealing is repeatable
        Map<Integer, Integer> spark = minibatchesByPartition(stats(2, Repartition.Always,
                RepartitionStrategy.SparkDefault));
        assertEquals(4, spark.values().stream().mapToInt(Integer::intValue).sum());
        assertEquals(spark, minibatchesByPartition(stats(2, Repartition.Always, RepartitionStrategy.SparkDefault)));
    }

    /** Records hook calls in this JVM (local mode). */
    public static final class RecordingHook implements TrainingHook {
        private static final long serialVersionUID = 1L;
        static final List<String> CALLS = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void preUpdate(DataSet minibatch, Model model) {
            CALLS.add("pre:" + minibatch.numExamples());
        }

        @Override
        public void postUpdate(DataSet minibatch, Model model) {
            CALLS.add("post:" + minibatch.numExamples());
        }
    }

    /** Sees, from a worker, whether the export directory holds this fit's files. */
    public static final class ExportWatcher implements TrainingHook {
        private static final long serialVersionUID = 1L;
        static final AtomicInteger FILES_SEEN = new AtomicInteger(-1);
        public String dir;

        public ExportWatcher() {
        }

        ExportWatcher(String dir) {
            this.dir = dir;
        }

        @Override
        public void preUpdate(DataSet minibatch, Model model) {
            try (var walk = Files.walk(Path.of(dir))) {
                FILES_SEEN.set((int) walk.filter(f -> Files.isRegularFile(f)
                        && !f.getFileName().toString().startsWith(".")).count()); // not Hadoop's .crc files
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void postUpdate(DataSet minibatch, Model model) {
        }
    }

    private static int exportedFiles(File dir) throws IOException {
        try (var walk = Files.walk(dir.toPath())) {
            return (int) walk.filter(f -> Files.isRegularFile(f) && !f.getFileName().toString().startsWith(".")).count();
        }
    }

    @Test
    void hooksRunAroundEveryMinibatchAndExportUsesTheDirectory(@TempDir File tmp) throws IOException {
        RecordingHook.CALLS.clear();
        ParameterAveragingTrainingMaster tm = oneWorker().exportDirectory(tmp.getAbsolutePath())
                .trainingHooks(new RecordingHook()).build();
        tm.addHook(new ExportWatcher(tmp.getAbsolutePath()));
        // hooks travel in the master's JSON by class name, stateless ones included
        ParameterAveragingTrainingMaster back = ParameterAveragingTrainingMaster.fromJson(tm.toJson());
        assertEquals(List.of(RecordingHook.class, ExportWatcher.class),
                back.getTrainingHooks().stream().map(Object::getClass).toList());
        assertEquals(tmp.getAbsolutePath(), ((ExportWatcher) back.getTrainingHooks().get(1)).dir);
        assertTrue(ParameterAveragingTrainingMaster.fromYaml(tm.toYaml()).getTrainingHooks().size() == 2);
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Adam(0.01), 1e-3), tm);
        JavaRDD<DataSet> rdd = sc().parallelize(data(6, 4, 54), 2);
        spark.fit(rdd);
        assertEquals(List.of("pre:8", "post:8", "pre:8", "post:8", "pre:8", "post:8"), RecordingHook.CALLS);
        assertEquals(6, ExportWatcher.FILES_SEEN.get(), "the 6 DataSets were exported under exportDirectory");
        File[] exports = tmp.listFiles();
        assertEquals(1, exports.length, "one export directory per exported RDD");
        // the next epoch on the same RDD reuses the export
        spark.fit(rdd);
        assertArrayEquals(exports, tmp.listFiles());
        assertEquals(6, exportedFiles(tmp));
        tm.removeHook(tm.getTrainingHooks().get(0));
        RecordingHook.CALLS.clear();
        // another RDD replaces the export
        spark.fit(sc().parallelize(data(2, 4, 55), 1));
        assertTrue(RecordingHook.CALLS.isEmpty());
        assertEquals(2, exportedFiles(tmp));
        assertTrue(tm.deleteTempFiles(sc()));
        assertEquals(0, tmp.listFiles().length, "deleteTempFiles removes the export");
        assertTrue(tm.deleteTempFiles(sc()), "nothing left to delete");
    }

    @Test
    void unsharedExportDirectoryOrEmptyDataIsRefused() {
        ParameterAveragingTrainingMaster tm = oneWorker().build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), tm);
        assertThrows(org.ferrodl.exception.DL4JInvalidInputException.class,
                () -> spark.fit(sc().parallelize(Collections.<DataSet>emptyList(), 2)));
        assertFalse(tm.getIsCollectTrainingStats());
    }
}
