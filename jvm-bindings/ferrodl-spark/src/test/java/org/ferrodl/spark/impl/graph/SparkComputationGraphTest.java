package org.ferrodl.spark.impl.graph;

import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.datasets.iterator.impl.ListMultiDataSetIterator;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.MergeVertex;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * SparkComputationGraph on local Spark (local[4]) with both training masters: a one-worker fit
 * equals local graph training, a two-input/two-output graph learns under both masters, and
 * scoring, inference and evaluation equal the local graph's. 8 tests, 18-45 s on 2 loaded cores.
 */
public class SparkComputationGraphTest {
    private static final float TOL = 1e-5f;
    private static final int IN1 = 6;
    private static final int IN2 = 4;

    /** in1 (6) -> d1 (8), in2 (4) -> d2 (8); [d1, d2] -> h (12) -> out1 (softmax 3), out2 (softmax 2). */
    public static ComputationGraphConfiguration twoByTwo(IUpdater updater, double l2) {
        return new NeuralNetConfiguration.Builder().seed(3).updater(updater).l2(l2).graphBuilder()
                .addInputs("in1", "in2")
                .addLayer("d1", new DenseLayer.Builder().nIn(IN1).nOut(8).activation(Activation.TANH).build(), "in1")
                .addLayer("d2", new DenseLayer.Builder().nIn(IN2).nOut(8).activation(Activation.TANH).build(), "in2")
                .addVertex("cat", new MergeVertex(), "d1", "d2")
                .addLayer("h", new DenseLayer.Builder().nIn(16).nOut(12).activation(Activation.TANH).build(), "cat")
                .addLayer("out1", new OutputLayer.Builder(LossFunction.MCXENT).nIn(12).nOut(3)
                        .activation(Activation.SOFTMAX).build(), "h")
                .addLayer("out2", new OutputLayer.Builder(LossFunction.MCXENT).nIn(12).nOut(2)
                        .activation(Activation.SOFTMAX).build(), "h")
                .setOutputs("out1", "out2")
                .build();
    }

    /** in (6) -> d (8) -> out (softmax 3): the DataSet-shaped graph. */
    static ComputationGraphConfiguration oneByOne(IUpdater updater, double l2) {
        return new NeuralNetConfiguration.Builder().seed(5).updater(updater).l2(l2).graphBuilder()
                .addInputs("in")
                .addLayer("d", new DenseLayer.Builder().nIn(IN1).nOut(8).activation(Activation.TANH).build(), "in")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nIn(8).nOut(3)
                        .activation(Activation.SOFTMAX).build(), "d")
                .setOutputs("out")
                .build();
    }

    public static ComputationGraph graph(ComputationGraphConfiguration conf) {
        ComputationGraph g = new ComputationGraph(conf);
        g.init();
        return g;
    }

    /**
     * {@code count} MultiDataSets of {@code size} examples: labels of out1 are the argmax of a fixed
     * random linear function of both inputs, labels of out2 the sign of another (learnable, so
     * accuracy can rise well above chance: 1/3 and 1/2).
     */
    public static List<MultiDataSet> twoByTwoData(int count, int size, long seed) {
        Random teacher = new Random(99);
        float[][] w1 = new float[IN1 + IN2][3];
        float[] w2 = new float[IN1 + IN2];
        for (int i = 0; i < IN1 + IN2; i++) {
            for (int c = 0; c < 3; c++) {
                w1[i][c] = (float) teacher.nextGaussian();
            }
            w2[i] = (float) teacher.nextGaussian();
        }
        Random r = new Random(seed);
        List<MultiDataSet> out = new ArrayList<>();
        for (int d = 0; d < count; d++) {
            float[] a = new float[size * IN1];
            float[] b = new float[size * IN2];
            float[] l1 = new float[size * 3];
            float[] l2 = new float[size * 2];
            for (int n = 0; n < size; n++) {
                float[] x = new float[IN1 + IN2];
                for (int i = 0; i < IN1 + IN2; i++) {
                    x[i] = r.nextFloat() * 2 - 1;
                }
                System.arraycopy(x, 0, a, n * IN1, IN1);
                System.arraycopy(x, IN1, b, n * IN2, IN2);
                int best = 0;
                double bestV = Double.NEGATIVE_INFINITY;
                for (int c = 0; c < 3; c++) {
                    double v = 0;
                    for (int i = 0; i < x.length; i++) {
                        v += x[i] * w1[i][c];
                    }
                    if (v > bestV) {
                        bestV = v;
                        best = c;
                    }
                }
                l1[n * 3 + best] = 1;
                double s = 0;
                for (int i = 0; i < x.length; i++) {
                    s += x[i] * w2[i];
                }
                l2[n * 2 + (s > 0 ? 1 : 0)] = 1;
            }
            out.add(new MultiDataSet(new INDArray[] {Nd4j.create(a, size, IN1), Nd4j.create(b, size, IN2)},
                    new INDArray[] {Nd4j.create(l1, size, 3), Nd4j.create(l2, size, 2)}));
        }
        return out;
    }

    /** The first input and first output of {@link #twoByTwoData} as DataSets. */
    static List<DataSet> oneByOneData(int count, int size, long seed) {
        List<DataSet> out = new ArrayList<>();
        for (MultiDataSet m : twoByTwoData(count, size, seed)) {
            out.add(new DataSet(m.getFeatures(0), m.getLabels(0)));
        }
        return out;
    }

    // ---------------------------------------------------------------------------------- training

    /**
     * One worker with default settings (Export, no seed) equals local training on the same data in
     * the same order over several averaging rounds, with Adam's state averaged and carried: 12
     * objects of 4 examples, batch 8, averaging every 2 minibatches (3 splits).
     */
    @Test
    void oneWorkerDefaultFitEqualsLocalGraphTraining() {
        ComputationGraphConfiguration conf = twoByTwo(new Adam(0.01), 1e-3);
        List<MultiDataSet> data = twoByTwoData(12, 4, 11);
        ComputationGraph local = graph(conf);
        for (int i = 0; i < data.size(); i += 2) {
            local.fit(MultiDataSet.merge(data.subList(i, i + 2)));
        }
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                .batchSizePerWorker(8).averagingFrequency(2).build();
        SparkComputationGraph spark = new SparkComputationGraph(sc(), conf, tm);
        ComputationGraph trained = spark.fitMultiDataSet(sc().parallelize(data, 3));

        float diff = maxAbsDiff(local.params().toFloatVector(), trained.params().toFloatVector());
        assertTrue(diff <= TOL, "max |distributed - local| = " + diff);
        assertEquals(6, trained.getIterationCount(), "iterations = minibatches of the one worker");
        assertEquals(1, trained.getEpochCount());
        assertEquals(local.score(), spark.getScore(), 1e-6, "score = the worker's last minibatch score");
        assertTrue(maxAbsDiff(local.getUpdaterState().toFloatVector(), trained.getUpdaterState().toFloatVector())
                <= TOL, "updater state carried");

        // DataSets on a one-input/one-output graph, Direct this time: the same equality
        ComputationGraphConfiguration c1 = oneByOne(new Adam(0.01), 0);
        List<DataSet> ds = oneByOneData(12, 4, 12);
        ComputationGraph local1 = graph(c1);
        for (int i = 0; i < ds.size(); i += 2) {
            local1.fit(DataSet.merge(ds.subList(i, i + 2)));
        }
        SparkComputationGraph spark1 = new SparkComputationGraph(sc(), c1, new ParameterAveragingTrainingMaster
                .Builder(1, 4).batchSizePerWorker(8).averagingFrequency(2)
                .rddTrainingApproach(RDDTrainingApproach.Direct).build());
        float diff1 = maxAbsDiff(local1.params().toFloatVector(),
                spark1.fit(sc().parallelize(ds, 2)).params().toFloatVector());
        assertTrue(diff1 <= TOL, "DataSet fit: max |distributed - local| = " + diff1);
    }

    /** Fitting from a directory of saved MultiDataSets equals fitting the same objects from an RDD. */
    @Test
    void fitFromSavedMultiDataSetsEqualsFitFromRdd(@TempDir Path dir) throws Exception {
        ComputationGraphConfiguration conf = twoByTwo(new Nesterovs(0.05, 0.9), 0);
        List<MultiDataSet> data = twoByTwoData(8, 4, 21);
        for (int i = 0; i < data.size(); i++) {
            data.get(i).save(new File(dir.toFile(), String.format("part-%03d.bin", i)));
        }
        Files.createFile(dir.resolve("_SUCCESS"));
        TrainingMaster<?, ?> tm = new ParameterAveragingTrainingMaster.Builder(2, 4).batchSizePerWorker(8)
                .averagingFrequency(1).build();
        ComputationGraph fromRdd = new SparkComputationGraph(sc(), conf, tm)
                .fitMultiDataSet(sc().parallelize(data, 2));
        ComputationGraph fromDir = new SparkComputationGraph(sc(), conf, tm).fitMultiDataSet(dir.toUri().toString());
        assertArrayEquals(fromRdd.params().toFloatVector(), fromDir.params().toFloatVector());
        ComputationGraph fromPaths = new SparkComputationGraph(sc(), conf, tm).fitPathsMultiDataSet(
                sc().parallelize(List.of(dir.resolve("part-000.bin").toUri().toString(),
                        dir.resolve("part-001.bin").toUri().toString()), 1));
        assertEquals(1, fromPaths.getIterationCount(), "two files of 4 = one minibatch of 8 on one of 2 workers");

        // DataSet files on a one-input/one-output graph: fit(String) equals fit(JavaRDD<DataSet>)
        ComputationGraphConfiguration c1 = oneByOne(new Nesterovs(0.05, 0.9), 0);
        List<DataSet> ds = oneByOneData(6, 4, 22);
        Path dsDir = Files.createDirectory(dir.resolve("datasets"));
        for (int i = 0; i < ds.size(); i++) {
            ds.get(i).save(new File(dsDir.toFile(), String.format("part-%03d.bin", i)));
        }
        ComputationGraph dsFromRdd = new SparkComputationGraph(sc(), c1, tm).fit(sc().parallelize(ds, 2));
        ComputationGraph dsFromDir = new SparkComputationGraph(sc(), c1, tm).fit(dsDir.toUri().toString());
        assertArrayEquals(dsFromRdd.params().toFloatVector(), dsFromDir.params().toFloatVector());
    }

    /** Accuracy of each output and the mean score on held-out data. */
    private static double[] quality(SparkComputationGraph spark, JavaRDD<MultiDataSet> test) {
        Evaluation e1 = spark.doEvaluationMDS(test, 2, 64, "out1", new Evaluation())[0];
        Evaluation e2 = spark.doEvaluationMDS(test, 2, 64, "out2", new Evaluation())[0];
        return new double[] {e1.accuracy(), e2.accuracy(), spark.calculateScoreMultiDataSet(test, true)};
    }

    private static void learns(TrainingMaster<?, ?> tm, int epochs, String label, TrainingListener... listeners) {
        JavaRDD<MultiDataSet> train = sc().parallelize(twoByTwoData(64, 16, 31), 4);
        JavaRDD<MultiDataSet> test = sc().parallelize(twoByTwoData(16, 32, 32), 2);
        SparkComputationGraph spark = new SparkComputationGraph(sc(), twoByTwo(new Nesterovs(0.1, 0.9), 0), tm);
        spark.setListeners(listeners);
        double[] before = quality(spark, test);
        for (int e = 0; e < epochs; e++) {
            spark.fitMultiDataSet(train);
        }
        double[] after = quality(spark, test);
        System.out.printf("SparkComputationGraphTest %s: out1 accuracy %.4f -> %.4f, out2 %.4f -> %.4f, score "
                + "%.4f -> %.4f%n", label, before[0], after[0], before[1], after[1], before[2], after[2]);
        assertTrue(after[0] >= 0.80, label + ": out1 accuracy " + after[0] + " (chance 1/3, before " + before[0] + ")");
        assertTrue(after[1] >= 0.85, label + ": out2 accuracy " + after[1] + " (chance 1/2, before " + before[1] + ")");
        assertTrue(after[2] <= 0.6 * before[2], label + ": score " + before[2] + " -> " + after[2]
                + " must fall by at least 40%");
        assertEquals(epochs, spark.getNetwork().getEpochCount());
    }

    /** A two-input/two-output graph learns under parameter averaging (4 workers). */
    @Test
    void twoInputTwoOutputGraphLearnsWithParameterAveraging() {
        learns(new ParameterAveragingTrainingMaster.Builder(4, 16).batchSizePerWorker(16).averagingFrequency(2)
                .rngSeed(1).build(), 6, "parameter averaging");
    }

    /**
     * Epochs of the gradient-sharing variant. Sharing is asynchronous, so its accuracy after a fit
     * varies from run to run: after 6 epochs out2 ranged 0.84-0.94 over 16 runs on a 2-core AMD
     * EPYC (2026-11-29), one under the 0.85 bar; after 10 epochs 0.887-0.926 over 6 runs (out1
     * 0.875-0.916, score 1.96 -> 0.41-0.70), the same bars.
     */
    static final int SHARING_EPOCHS = 10;

    /** The same graph learns under gradient sharing (one worker per partition, threshold-encoded updates). */
    @Test
    void twoInputTwoOutputGraphLearnsWithGradientSharing() {
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(16).batchSizePerWorker(16).rngSeed(2)
                .collectTrainingStats(true).build();
        CountingListener.reset();
        learns(tm, SHARING_EPOCHS, "gradient sharing", new CountingListener());
        // listeners run on the workers after every minibatch of every replica (local mode: this JVM)
        assertEquals(SHARING_EPOCHS * 64, CountingListener.CALLS.get(), "one iterationDone per minibatch");
        assertEquals(0, CountingListener.BAD.get(), "every call saw a finite score, 16 examples, "
                + "the replica's parameters and a counter below SHARING_EPOCHS × 64");
        // the last fit's statistics: one series of encoding steps per worker, one step per minibatch
        SparkTrainingStats stats = tm.getTrainingStats();
        long minibatches = 0;
        for (SparkTrainingStats.SharingWorkerStats w : stats.getSharingWorkerStats()) {
            assertEquals(w.minibatches(), w.replicaSteps().get(0).size(), "one encoding step per minibatch");
            minibatches += w.minibatches();
        }
        assertEquals(64, minibatches, "64 objects of 16 examples = 64 minibatches of 16");
        assertTrue(stats.getMeanBytesPerWorkerIteration() > 0
                && stats.getMeanBytesPerWorkerIteration() < 4.0 * stats.getParameterCount(),
                "encoded updates smaller than dense: " + stats.getMeanBytesPerWorkerIteration());
    }

    /** Counts iterationDone calls and checks what each one sees (local mode: executors share this JVM). */
    static final class CountingListener implements TrainingListener, java.io.Serializable {
        private static final long serialVersionUID = 1L;
        static final java.util.concurrent.atomic.AtomicInteger CALLS = new java.util.concurrent.atomic.AtomicInteger();
        static final java.util.concurrent.atomic.AtomicInteger BAD = new java.util.concurrent.atomic.AtomicInteger();

        static void reset() {
            CALLS.set(0);
            BAD.set(0);
        }

        @Override
        public void iterationDone(org.ferrodl.nn.api.Model model, int iteration, int epoch) {
            int call = CALLS.incrementAndGet();
            boolean ok = Double.isFinite(model.score()) && model.batchSize() == 16 && iteration >= 0
                    && iteration < SHARING_EPOCHS * 64 && epoch >= 0 && epoch < SHARING_EPOCHS
                    && (call % 97 != 1 || model.params().length() == model.numParams());
            if (!ok) {
                BAD.incrementAndGet();
            }
        }
    }

    // ---------------------------------------------------------------------------- bad input

    @Test
    void badInputFailsOnTheDriverWithClearMessages() {
        SparkComputationGraph spark = new SparkComputationGraph(sc(), twoByTwo(new Adam(0.01), 0),
                new ParameterAveragingTrainingMaster.Builder(2, 4).build());
        // one features array for a graph with two inputs
        MultiDataSet oneArray = new MultiDataSet(new INDArray[] {Nd4j.zeros(4, IN1)},
                new INDArray[] {Nd4j.zeros(4, 3), Nd4j.zeros(4, 2)});
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.fitMultiDataSet(sc().parallelize(List.of(oneArray), 1)));
        assertTrue(e.getMessage().contains("1 features arrays") && e.getMessage().contains("[in1, in2]"),
                e.getMessage());
        // labels of the wrong width for out2
        MultiDataSet wide = new MultiDataSet(new INDArray[] {Nd4j.zeros(4, IN1), Nd4j.zeros(4, IN2)},
                new INDArray[] {Nd4j.zeros(4, 3), Nd4j.zeros(4, 5)});
        e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.fitMultiDataSet(sc().parallelize(List.of(wide), 1)));
        assertTrue(e.getMessage().contains("\"out2\"") && e.getMessage().contains("5 values")
                && e.getMessage().contains("takes 2"), e.getMessage());
        // an empty RDD
        e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.fitMultiDataSet(sc().parallelize(new ArrayList<MultiDataSet>(), 2)));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
        // a DataSet fit of a two-input graph
        e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.fit(sc().parallelize(oneByOneData(1, 4, 1), 1)));
        assertTrue(e.getMessage().contains("1 features arrays"), e.getMessage());
        // evaluation: an unknown output, and one evaluation for two outputs
        JavaRDD<MultiDataSet> test = sc().parallelize(twoByTwoData(2, 4, 3), 1);
        IllegalArgumentException u = assertThrows(IllegalArgumentException.class,
                () -> spark.doEvaluationMDS(test, 1, 8, "out3", new Evaluation()));
        assertTrue(u.getMessage().contains("\"out3\"") && u.getMessage().contains("[out1, out2]"), u.getMessage());
        IllegalStateException s = assertThrows(IllegalStateException.class, () -> spark.evaluateMDS(test));
        assertTrue(s.getMessage().contains("2 outputs"), s.getMessage());
        // keyed scoring of an object with two examples names the key
        JavaPairRDD<String, MultiDataSet> keyed = sc().parallelizePairs(List.of(new Tuple2<>("k7",
                twoByTwoData(1, 2, 4).get(0))), 1);
        SparkException se = assertThrows(SparkException.class,
                () -> spark.scoreExamplesMultiDataSet(keyed, false).collect());
        assertTrue(se.getMessage().contains("key k7") && se.getMessage().contains("holds 2"), se.getMessage());
        assertThrows(IllegalStateException.class, () -> new SparkComputationGraph(sc(), spark.getNetwork())
                .fitMultiDataSet(test));
    }

    // ------------------------------------------------------------------ scoring and inference

    @Test
    void scoreExamplesAndFeedForwardEqualLocalPerExample() {
        ComputationGraph g = graph(twoByTwo(new Adam(0.01), 1e-2));
        List<MultiDataSet> data = twoByTwoData(5, 7, 41);
        SparkComputationGraph spark = new SparkComputationGraph(sc(), g);
        JavaRDD<MultiDataSet> rdd = sc().parallelize(data, 3);
        for (boolean reg : new boolean[] {false, true}) {
            List<Double> distributed = spark.scoreExamplesMultiDataSet(rdd, reg, 4).collect();
            List<MultiDataSet> single = new ArrayList<>();
            for (MultiDataSet m : data) {
                for (int i = 0; i < m.numExamples(); i++) {
                    single.add(m.getRange(i, i + 1));
                }
            }
            assertEquals(single.size(), distributed.size());
            List<Tuple2<Integer, MultiDataSet>> pairs = new ArrayList<>();
            for (int i = 0; i < single.size(); i++) {
                double local = g.scoreExamples(single.get(i), reg).getDouble(0);
                assertEquals(local, distributed.get(i), 1e-6, "example " + i + ", regularization " + reg);
                pairs.add(new Tuple2<>(i, single.get(i)));
            }
            Map<Integer, Double> keyed = spark.scoreExamplesMultiDataSet(sc().parallelizePairs(pairs, 3), reg, 5)
                    .collectAsMap();
            for (int i = 0; i < single.size(); i++) {
                assertEquals(g.scoreExamples(single.get(i), reg).getDouble(0), keyed.get(i), 1e-6, "key " + i);
            }
        }
        // calculateScore: the example-weighted mean of the minibatch scores
        double sum = 0;
        int n = 0;
        for (MultiDataSet m : data) {
            sum += g.score(m) * m.numExamples();
            n += m.numExamples();
        }
        assertEquals(sum / n, spark.calculateScoreMultiDataSet(rdd, true, 64), 1e-5);

        // feedForwardWithKey: one row per output per key
        List<Tuple2<Integer, INDArray[]>> features = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            MultiDataSet one = data.get(i / 7).getRange(i % 7, i % 7 + 1);
            features.add(new Tuple2<>(i, one.getFeatures()));
        }
        Map<Integer, INDArray[]> out = spark.feedForwardWithKey(sc().parallelizePairs(features, 2), 4).collectAsMap();
        for (Tuple2<Integer, INDArray[]> t : features) {
            INDArray[] local = g.output(t._2());
            INDArray[] dist = out.get(t._1());
            assertEquals(2, dist.length);
            for (int k = 0; k < 2; k++) {
                assertArrayEquals(new long[] {1, k == 0 ? 3 : 2}, dist[k].shape());
                assertTrue(maxAbsDiff(local[k].toFloatVector(), dist[k].toFloatVector()) <= 1e-6f, "key " + t._1());
            }
        }

        // DataSet forms on a one-input/one-output graph
        ComputationGraph g1 = graph(oneByOne(new Adam(0.01), 1e-2));
        SparkComputationGraph spark1 = new SparkComputationGraph(sc(), g1);
        List<DataSet> ds = oneByOneData(3, 5, 42);
        List<Double> scores = spark1.scoreExamples(sc().parallelize(ds, 2), true).collect();
        int i = 0;
        for (DataSet d : ds) {
            for (int r = 0; r < d.numExamples(); r++) {
                assertEquals(g1.scoreExamples(d.getRange(r, r + 1), true).getDouble(0), scores.get(i++), 1e-6);
            }
        }
    }

    /**
     * The remaining evaluation, scoring and inference forms of a one-output graph equal their local
     * counterparts: regression and ROC evaluations (RDD and saved files, DataSet and MultiDataSet),
     * calculateScore and keyed scoreExamples of DataSets, feedForwardWithMaskAndKey with masks.
     */
    @Test
    void everyOtherFormEqualsLocal(@TempDir Path dir) throws Exception {
        ComputationGraph g = graph(oneByOne(new Adam(0.01), 1e-2));
        g.fit(new org.ferrodl.datasets.iterator.impl.ListDataSetIterator(oneByOneData(10, 8, 60), 8));
        List<DataSet> ds = oneByOneData(5, 9, 61);
        List<MultiDataSet> mds = new ArrayList<>();
        for (int i = 0; i < ds.size(); i++) {
            mds.add(MultiDataSet.fromDataSet(ds.get(i)));
            ds.get(i).save(new File(dir.toFile(), "ds-" + i + ".bin"));
            mds.get(i).save(new File(dir.toFile(), "mds-" + i + ".bin"));
        }
        SparkComputationGraph spark = new SparkComputationGraph(sc(), g);
        spark.setDefaultEvaluationWorkers(2);
        assertEquals(2, spark.getDefaultEvaluationWorkers());
        Map<Integer, IEvaluation<?>[]> local = new LinkedHashMap<>();
        local.put(0, new IEvaluation<?>[] {new org.ferrodl.evaluation.regression.RegressionEvaluation(3),
                new ROCMultiClass(0), new Evaluation()});
        g.doEvaluation(new ListMultiDataSetIterator(mds, 9), local);
        var lReg = (org.ferrodl.evaluation.regression.RegressionEvaluation) local.get(0)[0];
        var lRoc = (ROCMultiClass) local.get(0)[1];
        var lEval = (Evaluation) local.get(0)[2];

        JavaRDD<MultiDataSet> mrdd = sc().parallelize(mds, 3);
        JavaRDD<DataSet> drdd = sc().parallelize(ds, 2);
        for (var reg : List.of(spark.evaluateRegressionMDS(mrdd), spark.evaluateRegression(drdd, 5))) {
            for (int c = 0; c < 3; c++) {
                assertEquals(lReg.meanSquaredError(c), reg.meanSquaredError(c), 1e-12);
                assertEquals(lReg.rSquared(c), reg.rSquared(c), 1e-9);
            }
        }
        for (ROCMultiClass roc : List.of(spark.evaluateROCMultiClassMDS(mrdd, 0, 4),
                spark.evaluateROCMultiClass(drdd, 0, 7))) {
            for (int c = 0; c < 3; c++) {
                assertEquals(lRoc.calculateAUC(c), roc.calculateAUC(c), 1e-12, "class " + c);
            }
        }
        String d = dir.toUri().toString();
        JavaRDD<String> mdsPaths = sc().parallelize(List.of(d + "mds-0.bin", d + "mds-1.bin", d + "mds-2.bin",
                d + "mds-3.bin", d + "mds-4.bin"), 2);
        List<Evaluation> evals = List.of(spark.evaluateMDS(mrdd), spark.evaluate(drdd),
                spark.doEvaluation(mdsPaths, new org.ferrodl.core.loader.impl.SerializedMultiDataSetLoader(),
                        new Evaluation())[0],
                spark.doEvaluation(sc().parallelize(List.of(d + "ds-0.bin", d + "ds-1.bin", d + "ds-2.bin",
                        d + "ds-3.bin", d + "ds-4.bin"), 3), new org.ferrodl.core.loader.impl.SerializedDataSetLoader(),
                        new Evaluation())[0]);
        for (Evaluation e : evals) {
            assertEquals(lEval.getConfusionMatrix(), e.getConfusionMatrix());
        }
        // calculateScore (average and sum) and keyed scoreExamples of DataSets
        double sum = 0;
        int n = 0;
        for (DataSet x : ds) {
            sum += g.score(x) * x.numExamples();
            n += x.numExamples();
        }
        assertEquals(sum / n, spark.calculateScore(drdd, true), 1e-5);
        assertEquals(sum, spark.calculateScore(drdd, false, 4), 1e-3);
        List<Tuple2<String, DataSet>> keyed = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            keyed.add(new Tuple2<>("e" + i, ds.get(0).getRange(i, i + 1)));
        }
        Map<String, Double> byKey = spark.scoreExamples(sc().parallelizePairs(keyed, 2), true, 4).collectAsMap();
        for (Tuple2<String, DataSet> t : keyed) {
            assertEquals(g.scoreExamples(t._2(), true).getDouble(0), byKey.get(t._1()), 1e-6, t._1());
        }
        // feature masks travel with their keys and reach the graph as locally
        Random r = new Random(62);
        List<Tuple2<Integer, Tuple2<INDArray[], INDArray[]>>> masked = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            INDArray mask = Nd4j.create(new float[] {r.nextBoolean() ? 1f : 0f}, 1, 1);
            masked.add(new Tuple2<>(i, new Tuple2<>(new INDArray[] {ds.get(1).getFeatures().getRow(i, true)},
                    i % 3 == 0 ? null : new INDArray[] {mask})));
        }
        Map<Integer, INDArray[]> out = spark.feedForwardWithMaskAndKey(sc().parallelizePairs(masked, 2), 4)
                .collectAsMap();
        for (Tuple2<Integer, Tuple2<INDArray[], INDArray[]>> t : masked) {
            INDArray[] m = t._2()._2();
            INDArray[] expected = g.output(false, t._2()._1(), m);
            assertTrue(maxAbsDiff(expected[0].toFloatVector(), out.get(t._1())[0].toFloatVector()) <= 1e-6f,
                    "key " + t._1());
        }
        SparkComputationGraph other = new SparkComputationGraph(sc(), graph(oneByOne(new Adam(0.01), 0)));
        other.setNetwork(g);
        assertEquals(g, other.getNetwork());
    }

    // ----------------------------------------------------------------------------- evaluation

    /** Distributed evaluation of each output equals the local graph's, exactly (counts, AUC). */
    @Test
    void distributedEvaluationEqualsLocalExactly() {
        ComputationGraph g = graph(twoByTwo(new Adam(0.01), 0));
        g.fit(new ListMultiDataSetIterator(twoByTwoData(20, 8, 50), 8));
        List<MultiDataSet> test = twoByTwoData(9, 11, 51);
        SparkComputationGraph spark = new SparkComputationGraph(sc(), g);
        for (int workers : new int[] {1, 4}) {
            for (int k = 0; k < 2; k++) {
                String name = k == 0 ? "out1" : "out2";
                Map<Integer, IEvaluation<?>[]> local = new LinkedHashMap<>();
                local.put(k, new IEvaluation<?>[] {new Evaluation(), new ROCMultiClass(0)});
                g.doEvaluation(new ListMultiDataSetIterator(test, 10), local);
                IEvaluation<?>[] dist = spark.doEvaluationMDS(sc().parallelize(test, 3), workers, 10, name,
                        new Evaluation(), new ROCMultiClass(0));
                Evaluation le = (Evaluation) local.get(k)[0];
                Evaluation de = (Evaluation) dist[0];
                assertEquals(le.getConfusionMatrix(), de.getConfusionMatrix(), name + " confusion counts");
                ROCMultiClass lr = (ROCMultiClass) local.get(k)[1];
                ROCMultiClass dr = (ROCMultiClass) dist[1];
                for (int c = 0; c < (k == 0 ? 3 : 2); c++) {
                    assertEquals(lr.calculateAUC(c), dr.calculateAUC(c), 1e-12, name + " AUC of class " + c);
                }
            }
        }
        // single-output graph: evaluate(JavaRDD<DataSet>) equals the local evaluate
        ComputationGraph g1 = graph(oneByOne(new Adam(0.01), 0));
        List<DataSet> ds = oneByOneData(6, 9, 52);
        Evaluation local = g1.evaluate(new org.ferrodl.datasets.iterator.impl.ListDataSetIterator(ds, 9));
        Evaluation dist = new SparkComputationGraph(sc(), g1).evaluate(sc().parallelize(ds, 4));
        assertEquals(local.getConfusionMatrix(), dist.getConfusionMatrix());
        assertEquals(local.accuracy(), dist.accuracy(), 0.0);
    }
}
