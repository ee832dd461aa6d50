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

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.mllib.linalg.DenseMatrix;
import org.apache.spark.mllib.linalg.DenseVector;
import org.apache.spark.mllib.linalg.Matrix;
import org.apache.spark.mllib.regression.LabeledPoint;
import org.ferrodl.core.loader.impl.SerializedDataSetLoader;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.util.MLLibUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** fit(String), fitPaths, evaluate(path, loader) from saved files; fitLabeledPoint and MLLibUtil. */
class FitFromStorageAndMLlibTest {

    private static final MultiLayerConfiguration CONF = conf(new Adam(0.01), 1e-3);

    private static ParameterAveragingTrainingMaster oneWorker() {
        return new ParameterAveragingTrainingMaster.Builder(1, 4).batchSizePerWorker(8).averagingFrequency(2).build();
    }

    private static float[] localTraining(List<DataSet> ds) {
        MultiLayerNetwork local = net(CONF);
        for (int i = 0; i < ds.size(); i += 2) {
            local.fit(DataSet.merge(ds.subList(i, Math.min(ds.size(), i + 2))));
        }
        return local.params().toFloatVector();
    }

    private static List<String> save(List<DataSet> ds, File dir) throws IOException {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < ds.size(); i++) {
            File f = new File(dir, String.format("part-%03d.bin", i));
            ds.get(i).save(f);
            paths.add(f.toURI().toString());
        }
        return paths;
    }

    @Test
    void fitFromDirectoryAndPathsEqualsLocalTraining(@TempDir File dir) throws IOException {
        List<DataSet> ds = data(10, 4, 61);
        List<String> paths = save(ds, dir);
        Files.writeString(new File(dir, "_SUCCESS").toPath(), ""); // marker files are skipped
        float[] expected = localTraining(ds);

        SparkDl4jMultiLayer a = new SparkDl4jMultiLayer(sc(), CONF, oneWorker());
        assertTrue(maxAbsDiff(expected, a.fit(dir.getAbsolutePath()).params().toFloatVector()) <= 1e-5f);
        assertEquals(1, a.getNetwork().getEpochCount());

        SparkDl4jMultiLayer b = new SparkDl4jMultiLayer(sc(), CONF, oneWorker());
        assertTrue(maxAbsDiff(expected, b.fitPaths(sc().parallelize(paths, 3)).params().toFloatVector()) <= 1e-5f);

        SparkDl4jMultiLayer c = new SparkDl4jMultiLayer(sc(), CONF, oneWorker());
        @SuppressWarnings("deprecation")
        MultiLayerNetwork viaDeprecated = c.fit(dir.toURI().toString(), 4);
        assertTrue(maxAbsDiff(expected, viaDeprecated.params().toFloatVector()) <= 1e-5f);

        // evaluation from the directory equals evaluation of the RDD
        Evaluation fromFiles = a.evaluate(dir.getAbsolutePath(), new SerializedDataSetLoader());
        assertEquals(a.evaluate(sc().parallelize(ds, 2)), fromFiles);
        assertEquals(40, fromFiles.getNumRowCounter());
        assertEquals(a.evaluate(sc().parallelize(ds, 2)), a.doEvaluation(sc().parallelize(paths, 2),
                new SerializedDataSetLoader(), new Evaluation())[0]);
    }

    /** A user's loader: one CSV line "f1,...,f6,class" per file, read through Hadoop's FileSystem. */
    static final org.ferrodl.core.loader.DataSetLoader CSV = (path, conf) -> {
        org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(path);
        try (var in = p.getFileSystem(conf).open(p)) {
            String[] v = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim().split(",");
            float[] f = new float[N_IN];
            for (int i = 0; i < N_IN; i++) {
                f[i] = Float.parseFloat(v[i]);
            }
            float[] l = new float[N_OUT];
            l[Integer.parseInt(v[N_IN])] = 1;
            return new DataSet(Nd4j.create(f, 1, N_IN), Nd4j.create(l, 1, N_OUT));
        }
    };

    @Test
    void fitPathsWithAUserLoaderEqualsLocalTraining(@TempDir File dir) throws IOException {
        List<DataSet> ones = data(16, 1, 67);
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < ones.size(); i++) {
            float[] f = ones.get(i).getFeatures().toFloatVector();
            float[] l = ones.get(i).getLabels().toFloatVector();
            StringBuilder line = new StringBuilder();
            for (float x : f) {
                line.append(x).append(',');
            }
            line.append(l[0] == 1 ? 0 : l[1] == 1 ? 1 : 2);
            File file = new File(dir, String.format("row-%02d.csv", i));
            Files.writeString(file.toPath(), line.toString());
            paths.add(file.getAbsolutePath());
        }
        MultiLayerNetwork local = net(CONF);
        for (int i = 0; i < ones.size(); i += 8) {
            local.fit(DataSet.merge(ones.subList(i, i + 8)));
        }
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 1).batchSizePerWorker(8)
                .averagingFrequency(1).build();
        MultiLayerNetwork trained = new SparkDl4jMultiLayer(sc(), CONF, tm).fitPaths(sc().parallelize(paths, 2), CSV);
        assertTrue(maxAbsDiff(local.params().toFloatVector(), trained.params().toFloatVector()) <= 1e-5f);
    }

    /** The default executeTrainingPaths (load on the executors, then train as from an RDD): gradient sharing. */
    @Test
    void gradientSharingTrainsFromADirectory(@TempDir File dir) throws IOException {
        save(data(10, 4, 66), dir);
        org.ferrodl.spark.parameterserver.training.SharedTrainingMaster tm =
                new org.ferrodl.spark.parameterserver.training.SharedTrainingMaster.Builder(4).batchSizePerWorker(4)
                        .rngSeed(1).collectTrainingStats(true).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), CONF, tm);
        float[] before = spark.getNetwork().params().toFloatVector();
        spark.fit(dir.getAbsolutePath());
        assertTrue(maxAbsDiff(before, spark.getNetwork().params().toFloatVector()) > 0, "parameters changed");
        assertEquals(40, spark.getSparkTrainingStats().getSharingWorkerStats().stream()
                .mapToLong(w -> w.examples()).sum(), "every saved example was trained on once");
        assertEquals(1, spark.getNetwork().getEpochCount());
    }

    @Test
    void corruptTruncatedOrForeignFilesFailNamingThePath(@TempDir File dir) throws IOException {
        List<String> paths = save(data(2, 4, 62), dir);
        byte[] good = Files.readAllBytes(new File(dir, "part-000.bin").toPath());
        File truncated = new File(dir, "truncated.bin");
        Files.write(truncated.toPath(), java.util.Arrays.copyOf(good, good.length / 2));
        File foreign = new File(dir, "foreign.bin");
        Files.writeString(foreign.toPath(), "this is a text file, not a DataSet");
        File corrupt = new File(dir, "corrupt.bin");
        byte[] bad = good.clone();
        for (int i = 4; i < 24 && i < bad.length; i++) {
            bad[i] = (byte) 0xff;
        }
        Files.write(corrupt.toPath(), bad);
        for (File f : new File[] {truncated, foreign, corrupt, new File(dir, "missing.bin")}) {
            SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), CONF, oneWorker());
            List<String> withBad = new ArrayList<>(paths);
            withBad.add(f.toURI().toString());
            Exception e = assertThrows(SparkException.class, () -> spark.fitPaths(sc().parallelize(withBad, 1)));
            assertTrue(e.getMessage().contains(f.getName()), f.getName() + ": " + e.getMessage());
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), CONF, oneWorker());
        File empty = new File(dir, "empty");
        assertTrue(empty.mkdir());
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> spark.fit(empty.getAbsolutePath()));
        assertTrue(e.getMessage().contains("holds no files"), e.getMessage());
        e = assertThrows(DL4JInvalidInputException.class, () -> spark.fit(new File(dir, "nope").getAbsolutePath()));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }

    private static List<LabeledPoint> points(List<DataSet> ds, boolean continuous) {
        List<LabeledPoint> out = new ArrayList<>();
        for (DataSet d : ds) {
            double[][] f = d.getFeatures().toDoubleMatrix();
            double[][] l = d.getLabels().toDoubleMatrix();
            for (int i = 0; i < f.length; i++) {
                double label = continuous ? l[i][0] : (l[i][0] == 1 ? 0 : l[i][1] == 1 ? 1 : 2);
                out.add(new LabeledPoint(label, new DenseVector(f[i])));
            }
        }
        return out;
    }

    @Test
    void fitLabeledPointEqualsLocalTrainingOnOneHotData() {
        List<DataSet> ds = data(8, 4, 63);
        float[] expected = localTraining(ds);
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), CONF, oneWorker());
        // 32 points grouped into DataSets of rddDataSetNumExamples = 4, in order
        MultiLayerNetwork trained = spark.fitLabeledPoint(sc().parallelize(points(ds, false), 1));
        assertTrue(maxAbsDiff(expected, trained.params().toFloatVector()) <= 1e-5f);

        List<LabeledPoint> bad = List.of(new LabeledPoint(3.0, new DenseVector(new double[N_IN])));
        SparkException e = assertThrows(SparkException.class, () -> spark.fitLabeledPoint(sc().parallelize(bad, 1)));
        assertTrue(e.getMessage().contains("class label 3.0"), e.getMessage());
        DL4JInvalidInputException w = assertThrows(DL4JInvalidInputException.class, () -> spark.fitLabeledPoint(
                sc().parallelize(List.of(new LabeledPoint(0, new DenseVector(new double[4]))), 1)));
        assertTrue(w.getMessage().contains("4 columns"), w.getMessage());
        assertThrows(DL4JInvalidInputException.class,
                () -> spark.fitLabeledPoint(sc().parallelize(new ArrayList<LabeledPoint>(), 2)));
        assertThrows(DL4JInvalidInputException.class,
                () -> spark.fitContinuousLabeledPoint(sc().parallelize(bad, 1)), "3 outputs cannot regress one label");
    }

    @Test
    void fitContinuousLabeledPointEqualsLocalRegression() {
        MultiLayerConfiguration reg = new NeuralNetConfiguration.Builder().seed(5).updater(new Adam(0.01)).list()
                .layer(new DenseLayer.Builder().nIn(N_IN).nOut(5).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MSE).nIn(5).nOut(1).activation(Activation.IDENTITY).build())
                .build();
        List<DataSet> ds = new ArrayList<>();
        for (DataSet d : data(6, 4, 64)) {
            float[] f = d.getFeatures().toFloatVector();
            float[] y = new float[4];
            for (int i = 0; i < 4; i++) {
                y[i] = f[i * N_IN] * 2 - f[i * N_IN + 1];
            }
            ds.add(new DataSet(d.getFeatures(), Nd4j.create(y, 4, 1)));
        }
        MultiLayerNetwork local = net(reg);
        for (int i = 0; i < ds.size(); i += 2) {
            local.fit(DataSet.merge(ds.subList(i, i + 2)));
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), reg, oneWorker());
        MultiLayerNetwork trained = spark.fitContinuousLabeledPoint(sc().parallelize(points(ds, true), 1));
        assertTrue(maxAbsDiff(local.params().toFloatVector(), trained.params().toFloatVector()) <= 1e-5f);
    }

    @Test
    void mllibConversionsKeepElementPositions() {
        Matrix m = new DenseMatrix(2, 3, new double[] {1, 4, 2, 5, 3, 6}); // column-major [[1,2,3],[4,5,6]]
        INDArray a = MLLibUtil.toMatrix(m);
        assertArrayEquals(new long[] {2, 3}, a.shape());
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, a.toFloatVector());
        Matrix back = MLLibUtil.toMatrix(a);
        assertArrayEquals(m.toArray(), back.toArray());
        assertArrayEquals(new float[] {7, 8}, MLLibUtil.toVector(new DenseVector(new double[] {7, 8})).toFloatVector());
        assertArrayEquals(new double[] {7, 8}, MLLibUtil.toVector(Nd4j.create(new float[] {7, 8}, 2, 1)).toArray());
        assertThrows(IllegalArgumentException.class, () -> MLLibUtil.toVector(Nd4j.zeros(2, 2)));

        DataSet one = MLLibUtil.fromLabeledPoint(new LabeledPoint(2, new DenseVector(new double[] {1, 2})), 4);
        assertArrayEquals(new float[] {0, 0, 1, 0}, one.getLabels().toFloatVector());
        assertEquals(1.5, MLLibUtil.fromContinuousLabeledPoint(
                new LabeledPoint(1.5, new DenseVector(new double[] {1}))).getLabels().getDouble(0), 0);
        DataSet ds = data(1, 5, 65).get(0);
        List<LabeledPoint> lp = MLLibUtil.toLabeledPoint(ds);
        assertEquals(5, lp.size());
        JavaRDD<DataSet> grouped = MLLibUtil.fromLabeledPoint(sc().parallelize(lp, 1), N_OUT, 2);
        List<DataSet> g = grouped.collect();
        assertEquals(List.of(2, 2, 1), g.stream().map(DataSet::numExamples).toList());
        assertEquals(ds, DataSet.merge(g));
        assertEquals(5, MLLibUtil.fromDataSet(sc().parallelize(List.of(ds), 1)).count());
        assertThrows(DL4JInvalidInputException.class, () -> MLLibUtil.fromLabeledPoint(
                new LabeledPoint(0.5, new DenseVector(new double[] {1})), 2));
    }
}
