package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.N_IN;
import static org.ferrodl.spark.SparkTestSupport.N_OUT;
import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.mllib.linalg.DenseMatrix;
import org.apache.spark.mllib.linalg.DenseVector;
import org.apache.spark.mllib.linalg.Matrix;
import org.apache.spark.mllib.linalg.Vector;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.EvaluationBinary;
import org.ferrodl.evaluation.classification.EvaluationCalibration;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCBinary;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.impl.evaluation.EvaluationWorkers;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Tuple2;

/** Evaluation, scoring and inference methods of SparkDl4jMultiLayer against local computation. */
class SparkDl4jMultiLayerApiTest {

    /** A trained-looking network: random init of the 6-8-3 classifier with L2 (so regularization matters). */
    private static MultiLayerNetwork network() {
        return net(conf(new Sgd(0.1), 1e-2));
    }

    private static List<DataSet> uneven(long seed) {
        List<DataSet> out = new ArrayList<>();
        java.util.Random r = new java.util.Random(seed);
        for (DataSet d : data(23, 1, seed)) {
            out.add(d);
        }
        for (int size : new int[] {5, 9, 2, 17}) {
            out.addAll(data(1, size, seed + size));
        }
        Collections.shuffle(out, r);
        return out;
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private static IEvaluation[] localEvaluation(MultiLayerNetwork net, List<DataSet> data, IEvaluation... evals) {
        for (DataSet d : data) {
            INDArray out = net.output(d.getFeatures(), false);
            for (IEvaluation e : evals) {
                e.eval(d.getLabels(), out, d.getLabelsMaskArray());
            }
        }
        return evals;
    }

    /**
     * Invariant 7 for the whole family: 1, 4 and 8 evaluation workers over 1, 3 and 7 partitions
     * give the local confusion counts exactly and AUCs within 1e-6; the worker limit holds.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 4, 8})
    void distributedEvaluationEqualsLocalForAnyWorkerCount(int workers) {
        MultiLayerNetwork net = network();
        List<DataSet> data = uneven(5);
        IEvaluation<?>[] local = localEvaluation(net, data, new Evaluation(), new ROCMultiClass(), new ROCMultiClass(16),
                new EvaluationCalibration(), new EvaluationBinary(), new ROCBinary(), new RegressionEvaluation(N_OUT));
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net);
        for (int partitions : new int[] {1, 3, 7}) {
            EvaluationWorkers.takeMaxConcurrent();
            IEvaluation<?>[] dist = spark.doEvaluation(sc().parallelize(data, partitions), workers, 4,
                    new Evaluation(), new ROCMultiClass(), new ROCMultiClass(16), new EvaluationCalibration(),
                    new EvaluationBinary(), new ROCBinary(), new RegressionEvaluation(N_OUT));
            int concurrent = EvaluationWorkers.takeMaxConcurrent();
            assertTrue(concurrent <= workers, concurrent + " networks evaluated at once with " + workers + " workers");
            assertEquals(local[0], dist[0], "confusion counts");
            assertEquals(data.stream().mapToInt(DataSet::numExamples).sum(), ((Evaluation) dist[0]).getNumRowCounter());
            for (int c = 0; c < N_OUT; c++) {
                assertEquals(((ROCMultiClass) local[1]).calculateAUC(c), ((ROCMultiClass) dist[1]).calculateAUC(c), 1e-6);
                assertEquals(((ROCMultiClass) local[2]).calculateAUC(c), ((ROCMultiClass) dist[2]).calculateAUC(c), 1e-6);
                assertEquals(((ROCBinary) local[5]).calculateAUC(c), ((ROCBinary) dist[5]).calculateAUC(c), 1e-6);
            }
            assertEquals(local[2], dist[2], "thresholded counts");
            assertEquals(local[3], dist[3], "calibration counts");
            assertEquals(local[4], dist[4], "binary counts");
            assertEquals(((RegressionEvaluation) local[6]).averageMeanSquaredError(),
                    ((RegressionEvaluation) dist[6]).averageMeanSquaredError(), 1e-6);
        }
    }

    /** setDefaultEvaluationWorkers is honoured: with 1 worker, 8 partitions on local[4] evaluate one at a time. */
    @Test
    void defaultEvaluationWorkersLimitsConcurrentNetworks() {
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), network());
        spark.setDefaultEvaluationWorkers(1);
        assertEquals(1, spark.getDefaultEvaluationWorkers());
        EvaluationWorkers.takeMaxConcurrent();
        Evaluation e = spark.evaluate(sc().parallelize(data(64, 40, 9), 8), 8);
        assertEquals(64 * 40, e.getNumRowCounter());
        assertEquals(1, EvaluationWorkers.takeMaxConcurrent());
        assertThrows(IllegalArgumentException.class, () -> spark.setDefaultEvaluationWorkers(0));
    }

    @Test
    void evaluateRegressionRocAndMultiClassMatchLocal() {
        MultiLayerNetwork net = network();
        List<DataSet> data = uneven(6);
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net);
        JavaRDD<DataSet> rdd = sc().parallelize(data, 3);
        RegressionEvaluation reg = spark.evaluateRegression(rdd);
        RegressionEvaluation localReg = (RegressionEvaluation) localEvaluation(net, data,
                new RegressionEvaluation(N_OUT))[0];
        for (int c = 0; c < N_OUT; c++) {
            assertEquals(localReg.meanSquaredError(c), reg.meanSquaredError(c), 1e-6);
            assertEquals(localReg.rSquared(c), reg.rSquared(c), 1e-6);
        }
        assertEquals(localReg.averageMeanAbsoluteError(), spark.evaluateRegression(rdd, 3).averageMeanAbsoluteError(),
                1e-6);
        ROCMultiClass multi = spark.evaluateROCMultiClass(rdd);
        assertEquals(SparkDl4jMultiLayer.DEFAULT_ROC_THRESHOLD_STEPS, multi.getROC(0).getThresholdSteps());
        assertEquals(localEvaluation(net, data, new ROCMultiClass(32))[0], multi);
        ROCMultiClass exact = spark.evaluateROCMultiClass(rdd, 0, 5);
        assertEquals(((ROCMultiClass) localEvaluation(net, data, new ROCMultiClass(0))[0]).calculateAverageAUC(),
                exact.calculateAverageAUC(), 1e-6);
        Evaluation named = spark.evaluate(rdd, List.of("x", "y", "z"));
        assertEquals("z", named.getClassLabel(2));
        assertEquals(localEvaluation(net, data, new Evaluation())[0].toString().length() > 0, true);
        // a binary classifier for ROC: labels of class 1 vs rest as one sigmoid-like column
        List<DataSet> binary = new ArrayList<>();
        for (DataSet d : data) {
            float[] l = d.getLabels().toFloatVector();
            float[] y = new float[d.numExamples()];
            for (int i = 0; i < y.length; i++) {
                y[i] = l[i * N_OUT + 1];
            }
            binary.add(new DataSet(d.getFeatures(), Nd4j.create(y, y.length, 1)));
        }
        MultiLayerNetwork sig = net(new org.ferrodl.nn.conf.NeuralNetConfiguration.Builder().seed(3).list()
                .layer(new org.ferrodl.nn.conf.layers.OutputLayer.Builder(
                        org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction.XENT).nIn(N_IN).nOut(1)
                        .activation(org.ferrodl.linalg.activations.Activation.SIGMOID).build()).build());
        SparkDl4jMultiLayer sparkSig = new SparkDl4jMultiLayer(sc(), sig);
        ROC roc = sparkSig.evaluateROC(sc().parallelize(binary, 4), 0, 3);
        assertEquals(((ROC) localEvaluation(sig, binary, new ROC())[0]).calculateAUC(), roc.calculateAUC(), 1e-6);
        assertEquals(localEvaluation(sig, binary, new ROC(32))[0], sparkSig.evaluateROC(sc().parallelize(binary, 2)));
    }

    @Test
    void emptyDataIsRefused() {
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), network());
        JavaRDD<DataSet> empty = sc().parallelize(Collections.<DataSet>emptyList(), 3);
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.doEvaluation(empty, 8, new ROC()));
        assertTrue(e.getMessage().contains("no examples"), e.getMessage());
        assertThrows(DL4JInvalidInputException.class, () -> spark.evaluateRegression(empty));
        assertThrows(IllegalArgumentException.class, () -> spark.doEvaluation(empty, 0, new ROC()));
        assertThrows(IllegalArgumentException.class, () -> spark.doEvaluation(empty, 8));
        assertEquals(0, spark.scoreExamples(empty, true).count());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void scoreExamplesEqualsLocalPerExample(boolean regularization) {
        MultiLayerNetwork net = network();
        List<DataSet> data = uneven(7);
        List<Double> local = new ArrayList<>();
        for (DataSet d : data) {
            for (float s : net.scoreExamples(d, regularization).toFloatVector()) {
                local.add((double) s);
            }
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net);
        JavaRDD<DataSet> rdd = sc().parallelize(data, 4);
        List<List<Double>> results = List.of(spark.scoreExamples(rdd, regularization).collect(),
                spark.scoreExamples(rdd.rdd(), regularization).collect(),
                spark.scoreExamples(rdd, regularization, 3).collect(),
                spark.scoreExamples(rdd.rdd(), regularization, 50).collect());
        for (List<Double> r : results) {
            assertEquals(local.size(), r.size());
            for (int i = 0; i < r.size(); i++) {
                assertEquals(local.get(i), r.get(i), 1e-6, "example " + i);
            }
        }
        // keyed: one example per key
        List<Tuple2<String, DataSet>> keyed = new ArrayList<>();
        List<DataSet> singles = data(30, 1, 8);
        for (int i = 0; i < singles.size(); i++) {
            keyed.add(new Tuple2<>("k" + i, singles.get(i)));
        }
        JavaPairRDD<String, DataSet> pairs = sc().parallelizePairs(keyed, 4);
        for (Map<String, Double> m : List.of(spark.scoreExamples(pairs, regularization).collectAsMap(),
                spark.scoreExamples(pairs, regularization, 7).collectAsMap())) {
            assertEquals(30, m.size());
            for (int i = 0; i < singles.size(); i++) {
                assertEquals(net.scoreExamples(singles.get(i), regularization).getDouble(0), m.get("k" + i), 1e-6);
            }
        }
    }

    @Test
    void keyedScoringRefusesDataSetsOfSeveralExamplesNamingTheKey() {
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), network());
        JavaPairRDD<String, DataSet> pairs = sc().parallelizePairs(List.of(new Tuple2<>("ok", data(1, 1, 1).get(0)),
                new Tuple2<>("bad-key", data(1, 2, 2).get(0))), 1);
        SparkException e = assertThrows(SparkException.class, () -> spark.scoreExamples(pairs, false).collect());
        assertTrue(e.getMessage().contains("bad-key") && e.getMessage().contains("holds 2"), e.getMessage());
    }

    @Test
    void feedForwardWithKeyEqualsLocalOutput() {
        MultiLayerNetwork net = network();
        List<DataSet> singles = data(25, 1, 11);
        List<Tuple2<Integer, INDArray>> keyed = new ArrayList<>();
        for (int i = 0; i < singles.size(); i++) {
            INDArray f = singles.get(i).getFeatures();
            keyed.add(new Tuple2<>(i, i % 2 == 0 ? f : f.reshape(N_IN))); // [1, nIn] and [nIn] both accepted
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net);
        Map<Integer, INDArray> out = spark.feedForwardWithKey(sc().parallelizePairs(keyed, 3), 4).collectAsMap();
        assertEquals(25, out.size());
        for (int i = 0; i < singles.size(); i++) {
            float[] expected = net.output(singles.get(i).getFeatures(), false).toFloatVector();
            assertArrayEquals(new long[] {1, N_OUT}, out.get(i).shape());
            assertTrue(maxAbsDiff(expected, out.get(i).toFloatVector()) <= 1e-6f);
        }
        JavaPairRDD<Integer, INDArray> wrong = sc().parallelizePairs(List.of(new Tuple2<>(77, Nd4j.zeros(1, 5))), 1);
        SparkException e = assertThrows(SparkException.class, () -> spark.feedForwardWithKey(wrong, 4).collect());
        assertTrue(e.getMessage().contains("key 77") && e.getMessage().contains("6 features"), e.getMessage());
    }

    @Test
    void predictMatrixAndVectorEqualNetworkOutput() {
        MultiLayerNetwork net = network();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net);
        DataSet d = data(1, 4, 12).get(0);
        double[][] rows = d.getFeatures().toDoubleMatrix();
        double[] colMajor = new double[4 * N_IN];
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < N_IN; j++) {
                colMajor[j * 4 + i] = rows[i][j];
            }
        }
        Matrix predicted = spark.predict(new DenseMatrix(4, N_IN, colMajor));
        INDArray expected = net.output(d.getFeatures(), false);
        assertEquals(4, predicted.numRows());
        assertEquals(N_OUT, predicted.numCols());
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < N_OUT; j++) {
                assertEquals(expected.getDouble(i, j), predicted.apply(i, j), 1e-6);
            }
            Vector v = spark.predict(new DenseVector(rows[i]));
            assertEquals(expected.getDouble(i, 0), v.apply(0), 1e-6);
            assertEquals(N_OUT, v.size());
        }
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.predict(new DenseVector(new double[5])));
        assertTrue(e.getMessage().contains("5 columns") && e.getMessage().contains("6 inputs"), e.getMessage());
    }

    /** Counts iterations in this JVM (local mode: executors share it). */
    static final class CountingListener implements TrainingListener, Serializable {
        private static final long serialVersionUID = 1L;
        static final AtomicInteger ITERATIONS = new AtomicInteger();

        @Override
        public void iterationDone(Model model, int iteration, int epoch) {
            ITERATIONS.incrementAndGet();
        }
    }

    @Test
    void listenersRunOnTheTrainingWorkers() {
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(2).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), tm);
        spark.setListeners(new CountingListener());
        assertEquals(1, spark.getListeners().size());
        CountingListener.ITERATIONS.set(0);
        // 12 objects of 4: splits of 4 objects (2 workers x 2 minibatches) -> 3 splits x 2 workers x 2 = 12
        spark.fit(sc().parallelize(data(12, 4, 13), 3));
        assertEquals(12, CountingListener.ITERATIONS.get());
        TrainingListener notSerializable = (m, i, e) -> { };
        assertThrows(IllegalArgumentException.class, () -> spark.setListeners(notSerializable));
        spark.setListeners(List.of());
        assertTrue(spark.getListeners().isEmpty());
    }
}
