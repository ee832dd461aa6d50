package org.ferrodl.nn.multilayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.jni.NativeNetwork;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Needs the native library. */
class MultiLayerNetworkTest {

    @TempDir
    Path dir;

    /** 2 features -> 8 tanh -> 3 softmax, Adam. */
    static MultiLayerConfiguration classifier(long seed) {
        return new NeuralNetConfiguration.Builder().seed(seed).updater(new Adam(0.05)).weightInit(WeightInit.XAVIER)
                .list()
                .layer(new DenseLayer.Builder().nIn(2).nOut(8).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(8).nOut(3).activation(Activation.SOFTMAX)
                        .build())
                .build();
    }

    /** Three well separated Gaussian blobs (std 0.5) around (0,0), (3,3), (-3,3); 30 examples each. */
    static DataSet blobs(long seed) {
        Random r = new Random(seed);
        double[][] centers = {{0, 0}, {3, 3}, {-3, 3}};
        int n = 90;
        float[][] f = new float[n][2];
        float[][] l = new float[n][3];
        for (int i = 0; i < n; i++) {
            int c = i % 3;
            f[i][0] = (float) (centers[c][0] + 0.5 * r.nextGaussian());
            f[i][1] = (float) (centers[c][1] + 0.5 * r.nextGaussian());
            l[i][c] = 1;
        }
        return new DataSet(Nd4j.create(f), Nd4j.create(l));
    }

    /** One output layer 2 -> 2, identity, MSE, plain SGD: everything computable by hand. */
    static MultiLayerConfiguration linearMse(double l2) {
        return new NeuralNetConfiguration.Builder().seed(1).updater(new Sgd(0.1)).l2(l2).list()
                .layer(new OutputLayer.Builder(LossFunction.MSE).nIn(2).nOut(2).activation(Activation.IDENTITY)
                        .build())
                .build();
    }

    private static final INDArray W_B = Nd4j.create(new float[] {1, 2, 3, 4, 0.5f, -0.5f}, 1, 6);
    private static final INDArray X = Nd4j.create(new float[] {1, 1, 2, 0}, 2, 2);
    private static final INDArray Y = Nd4j.create(new float[] {4, 6, 3, 3}, 2, 2);

    @Test
    void outputFollowsTheParameterLayoutWeightsRowMajorThenBias() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(linearMse(0))) {
            net.init();
            assertEquals(6, net.numParams());
            net.setParams(W_B);
            // x·W + b with W = [[1,2],[3,4]], b = [0.5,-0.5]
            assertEquals(Nd4j.create(new float[] {4.5f, 5.5f, 2.5f, 3.5f}, 2, 2), net.output(X));
            assertEquals(W_B, net.params());
        }
    }

    @Test
    void oneSgdStepMatchesTheHandComputedUpdate() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(linearMse(0))) {
            net.init();
            net.setParams(W_B);
            net.fit(X, Y);
            // score = mean over examples of Σ(y-ŷ)²/nOut = (0.5/2 + 0.5/2) / 2 = 0.25, before the update
            assertEquals(0.25, net.score(), 1e-6);
            // dL/dŷ = (ŷ-y)·2/(nOut·N); dW = xᵀ·δ = [[-0.25, 0.25], [0.25, -0.25]], db = [0, 0]; W -= 0.1·dW
            float[] expected = {1.025f, 1.975f, 2.975f, 4.025f, 0.5f, -0.5f};
            assertArrayEquals(expected, net.params().toFloatVector(), 1e-6f);
            assertEquals(1, net.getIterationCount());
            assertEquals(0, net.getUpdaterState().length(), "plain SGD has no state");
        }
    }

    @Test
    void scoreIncludesL2OnWeightsOnly() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(linearMse(0.1))) {
            net.init();
            net.setParams(W_B);
            // 0.25 + 0.5·0.1·(1+4+9+16)
            assertEquals(1.75, net.score(new DataSet(X, Y)), 1e-6);
            assertEquals(0, net.getIterationCount(), "score(DataSet) does not train");
        }
    }

    @Test
    void labelsMaskPerExampleExcludesExamplesButTheMeanStillDividesByN() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(linearMse(0))) {
            net.init();
            net.setParams(W_B);
            DataSet d = new DataSet(X, Y.dup());
            d.getLabels().putScalar(1, 0, 100); // a huge error in example 1, masked out below
            d.setLabelsMaskArray(Nd4j.create(new float[] {1, 0}, 2, 1));
            assertEquals(0.125, net.score(d), 1e-6);
        }
    }

    @Test
    void trainingReducesTheScoreFivefoldAndClassifiesTheBlobs() {
        DataSet data = blobs(7);
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(42))) {
            net.init();
            double initial = net.score(data);
            assertTrue(initial > 0.5, "initial score " + initial);
            for (int i = 0; i < 150; i++) {
                net.fit(data);
            }
            double finalScore = net.score(data);
            assertTrue(finalScore < initial / 5, "score " + initial + " -> " + finalScore);
            assertEquals(150, net.getIterationCount());
            assertEquals(2 * net.numParams(), net.getUpdaterState().length(), "Adam keeps m and v");
            Evaluation e = net.evaluate(new ListDataSetIterator(data.asList(), 10));
            assertEquals(90, e.getNumRowCounter());
            assertTrue(e.accuracy() >= 0.95, e.stats());
        }
    }

    @Test
    void fitIteratorCountsEpochsAndIterations() {
        DataSet data = blobs(3);
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(5))) {
            net.init();
            ListDataSetIterator it = new ListDataSetIterator(data.asList(), 30); // 3 minibatches per epoch
            net.fit(it, 4);
            assertEquals(4, net.getEpochCount());
            assertEquals(12, net.getIterationCount());
            net.fit(it); // exhausted iterator: reset first
            assertEquals(5, net.getEpochCount());
            assertEquals(15, net.getIterationCount());
            assertEquals(15, net.getLayerWiseConfigurations().getIterationCount());
            assertEquals(5, net.getLayerWiseConfigurations().getEpochCount());
            net.setIterationCount(100);
            net.incrementEpochCount();
            assertEquals(100, net.getIterationCount());
            assertEquals(6, net.getEpochCount());
        }
    }

    @Test
    void sameSeedGivesIdenticalParametersAndDifferentSeedsDiffer() {
        DataSet data = blobs(11);
        try (MultiLayerNetwork a = new MultiLayerNetwork(classifier(123));
             MultiLayerNetwork b = new MultiLayerNetwork(classifier(123));
             MultiLayerNetwork c = new MultiLayerNetwork(classifier(124))) {
            a.init();
            b.init();
            c.init();
            assertEquals(a.params(), b.params());
            assertNotEquals(a.params(), c.params());
            for (int i = 0; i < 5; i++) {
                a.fit(data);
                b.fit(data);
            }
            assertTrue(a.params().equalsWithEps(b.params(), 1e-6));
            assertEquals(a.score(), b.score(), 1e-9);
        }
    }

    @Test
    void initialisationFollowsWeightInitAndBiasInit() {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(9).biasInit(0.25).list()
                .layer(new DenseLayer.Builder().nIn(200).nOut(300).weightInit(WeightInit.XAVIER).build())
                .layer(new OutputLayer.Builder().nIn(300).nOut(100).weightInit(WeightInit.RELU).build())
                .build();
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            net.init();
            float[] p = net.params().toFloatVector();
            assertEquals(200 * 300 + 300 + 300 * 100 + 100, p.length);
            // standard deviations within 3% (60,000 and 30,000 samples: standard error < 0.5%)
            assertEquals(Math.sqrt(2.0 / 500), std(p, 0, 60000), 0.03 * Math.sqrt(2.0 / 500));
            assertEquals(Math.sqrt(2.0 / 300), std(p, 60300, 90300), 0.03 * Math.sqrt(2.0 / 300));
            for (int i = 60000; i < 60300; i++) {
                assertEquals(0.25f, p[i]);
            }
            assertEquals(0.25f, p[p.length - 1]);
        }
    }

    private static double std(float[] p, int from, int to) {
        double s = 0;
        double s2 = 0;
        for (int i = from; i < to; i++) {
            s += p[i];
            s2 += (double) p[i] * p[i];
        }
        int n = to - from;
        double mean = s / n;
        return Math.sqrt(s2 / n - mean * mean);
    }

    @Test
    void wrongFeatureWidthIsAClearError() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(1))) {
            net.init();
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> net.output(Nd4j.zeros(4, 3)));
            assertTrue(e.getMessage().contains("3 columns") && e.getMessage().contains("nIn=2"), e.getMessage());
            DL4JInvalidInputException fit = assertThrows(DL4JInvalidInputException.class,
                    () -> net.fit(Nd4j.zeros(4, 5), Nd4j.zeros(4, 3)));
            assertTrue(fit.getMessage().contains("5 columns") && fit.getMessage().contains("nIn=2"), fit.getMessage());
            DL4JInvalidInputException rank = assertThrows(DL4JInvalidInputException.class,
                    () -> net.output(Nd4j.zeros(2)));
            assertTrue(rank.getMessage().contains("matrix"), rank.getMessage());
            assertEquals(0, net.getIterationCount(), "a rejected fit is not an iteration");
        }
    }

    @Test
    void wrongLabelWidthIsAClearError() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(1))) {
            net.init();
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> net.fit(Nd4j.zeros(4, 2), Nd4j.zeros(4, 5)));
            assertTrue(e.getMessage().contains("labels have 5 columns") && e.getMessage().contains("nOut=3"),
                    e.getMessage());
            DL4JInvalidInputException rows = assertThrows(DL4JInvalidInputException.class,
                    () -> net.fit(new DataSet(Nd4j.zeros(4, 2), Nd4j.zeros(4, 3)) {
                        @Override
                        public INDArray getLabels() {
                            return Nd4j.zeros(3, 3);
                        }
                    }));
            assertTrue(rows.getMessage().contains("3 rows") && rows.getMessage().contains("4"), rows.getMessage());
        }
    }

    @Test
    void nanAndInfiniteFeaturesAreClearErrorsNamingRowAndColumn() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(1))) {
            net.init();
            INDArray f = Nd4j.zeros(3, 2);
            f.putScalar(2, 1, Float.NaN);
            DL4JInvalidInputException nan = assertThrows(DL4JInvalidInputException.class, () -> net.output(f));
            assertTrue(nan.getMessage().contains("NaN") && nan.getMessage().contains("row 2")
                    && nan.getMessage().contains("column 1"), nan.getMessage());
            INDArray g = Nd4j.zeros(3, 2);
            g.putScalar(1, 0, Double.POSITIVE_INFINITY);
            DL4JInvalidInputException inf = assertThrows(DL4JInvalidInputException.class,
                    () -> net.fit(g, Nd4j.zeros(3, 3)));
            assertTrue(inf.getMessage().contains("infinity") && inf.getMessage().contains("row 1")
                    && inf.getMessage().contains("column 0"), inf.getMessage());
        }
    }

    @Test
    void invalidConfigurationIsRejectedOnBothSides() {
        assertThrows(DL4JInvalidConfigException.class, () -> new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nIn(2).nOut(4).build())
                .layer(new OutputLayer.Builder().nIn(5).nOut(2).build()).build());
        // the engine validates again: a document that bypasses the Java builder
        String json = classifier(1).toJson().replace("\"nIn\" : 8", "\"nIn\" : 7");
        DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class, () -> NativeNetwork.create(json));
        assertTrue(e.getMessage().contains("nIn=7") && e.getMessage().contains("nOut=8"), e.getMessage());
        assertThrows(DL4JInvalidConfigException.class, () -> NativeNetwork.create("{\"formatVersion\": 1}"));
    }

    @Test
    void setParamsAndUpdaterStateCheckTheLength() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(1))) {
            net.init();
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> net.setParams(Nd4j.zeros(1, 5)));
            assertTrue(e.getMessage().contains("5"), e.getMessage());
            assertThrows(DL4JInvalidInputException.class, () -> net.setUpdaterState(Nd4j.zeros(1, 3)));
        }
    }

    @Test
    void saveLoadRoundTripGivesIdenticalOutputAndContinuesTraining(@TempDir Path tmp) throws Exception {
        DataSet data = blobs(5);
        File f = tmp.resolve("model.zip").toFile();
        try (MultiLayerNetwork net = new MultiLayerNetwork(classifier(77))) {
            net.init();
            for (int i = 0; i < 10; i++) {
                net.fit(data);
            }
            net.save(f, true);
            try (MultiLayerNetwork back = MultiLayerNetwork.load(f, true)) {
                assertEquals(net.output(data.getFeatures()), back.output(data.getFeatures()));
                assertEquals(net.params(), back.params());
                assertEquals(net.getUpdaterState(), back.getUpdaterState());
                assertEquals(10, back.getIterationCount());
                assertEquals(net.getLayerWiseConfigurations(), back.getLayerWiseConfigurations());
                net.fit(data);
                back.fit(data);
                assertEquals(net.params(), back.params(), "with the updater state, training continues identically");
            }
            try (MultiLayerNetwork noUpdater = MultiLayerNetwork.load(f, false)) {
                assertEquals(0.0, noUpdater.getUpdaterState().sumNumber().doubleValue());
            }
        }
    }

    @Test
    void loadRejectsBadFilesWithTheFileName() throws Exception {
        File text = dir.resolve("notamodel.zip").toFile();
        Files.write(text.toPath(), "hello".getBytes(StandardCharsets.UTF_8));
        java.io.IOException e = assertThrows(java.io.IOException.class, () -> MultiLayerNetwork.load(text, true));
        assertTrue(e.getMessage().contains("notamodel.zip") && e.getMessage().contains("not a ferrodl model"),
                e.getMessage());
        File emptyZip = dir.resolve("empty.zip").toFile();
        try (java.util.zip.ZipOutputStream z = new java.util.zip.ZipOutputStream(
                Files.newOutputStream(emptyZip.toPath()))) {
            z.putNextEntry(new java.util.zip.ZipEntry("other.txt"));
            z.closeEntry();
        }
        java.io.IOException missing = assertThrows(java.io.IOException.class,
                () -> MultiLayerNetwork.load(emptyZip, true));
        assertTrue(missing.getMessage().contains("ferrodl-model.properties"), missing.getMessage());
        assertThrows(java.io.IOException.class, () -> MultiLayerNetwork.load(dir.resolve("absent.zip").toFile(), true));
    }

    @Test
    void closeIsIdempotentAndLaterCallsFail() {
        MultiLayerNetwork net = new MultiLayerNetwork(classifier(1));
        net.init();
        net.close();
        net.close();
        assertTrue(net.isClosed());
        NativeStateException e = assertThrows(NativeStateException.class, () -> net.output(Nd4j.zeros(1, 2)));
        assertEquals("network is closed", e.getMessage());
        assertThrows(NativeStateException.class, net::params);
        assertThrows(NativeStateException.class, net::init);
        MultiLayerNetwork notInit = new MultiLayerNetwork(classifier(1));
        NativeStateException ni = assertThrows(NativeStateException.class, notInit::params);
        assertTrue(ni.getMessage().contains("init()"), ni.getMessage());
        notInit.close();
    }

    @Test
    void cloneAndJavaSerializationAreIndependentCopies() throws Exception {
        DataSet data = blobs(9);
        try (MultiLayerNetwork net = new MultiLayerNetwork(
                new NeuralNetConfiguration.Builder().seed(3).updater(new Nesterovs(0.05, 0.9)).list()
                        .layer(new DenseLayer.Builder().nIn(2).nOut(4).activation(Activation.RELU).build())
                        .layer(new OutputLayer.Builder().nIn(4).nOut(3).activation(Activation.SOFTMAX).build())
                        .build())) {
            net.init();
            net.fit(data);
            net.fit(data);
            try (MultiLayerNetwork copy = net.clone();
                 MultiLayerNetwork deser = SerializationUtil.javaRoundTrip(net)) {
                for (MultiLayerNetwork other : new MultiLayerNetwork[] {copy, deser}) {
                    assertEquals(net.params(), other.params());
                    assertEquals(net.getUpdaterState(), other.getUpdaterState());
                    assertEquals(2, other.getIterationCount());
                    assertEquals(net.score(), other.score(), 0.0);
                }
                copy.fit(data);
                assertNotEquals(net.params(), copy.params());
                assertEquals(net.params(), deser.params());
                assertFalse(net.params().equals(copy.params()));
            }
        }
    }

    @Test
    void initWithParametersUsesThem() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(linearMse(0))) {
            net.init(W_B, true);
            assertEquals(W_B, net.params());
        }
    }
}
