package org.ferrodl.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/** One local Spark context shared by all tests of this JVM, plus small data and network builders. */
public final class SparkTestSupport {
    public static final int N_IN = 6;
    public static final int N_OUT = 3;
    private static JavaSparkContext sc;

    private SparkTestSupport() {
    }

    public static synchronized JavaSparkContext sc() {
        if (sc == null) {
            SparkConf conf = new SparkConf().setMaster("local[4]").setAppName("ferrodl-tests")
                    .set("spark.ui.enabled", "false")
                    .set("spark.driver.host", "127.0.0.1")
                    .set("spark.driver.bindAddress", "127.0.0.1");
            sc = new JavaSparkContext(conf);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> sc.stop()));
        }
        return sc;
    }

    /** A 6-8-3 tanh/softmax classifier with the given updater and a fixed seed. */
    public static MultiLayerConfiguration conf(IUpdater updater, double l2) {
        return new NeuralNetConfiguration.Builder().seed(7).updater(updater).l2(l2).list()
                .layer(new DenseLayer.Builder().nIn(N_IN).nOut(8).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(8).nOut(N_OUT)
                        .activation(Activation.SOFTMAX).build())
                .build();
    }

    public static MultiLayerNetwork net(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /** {@code count} DataSets of {@code size} random examples each (features in [-1,1), one-hot labels). */
    public static List<DataSet> data(int count, int size, long seed) {
        Random r = new Random(seed);
        List<DataSet> out = new ArrayList<>();
        for (int d = 0; d < count; d++) {
            float[] f = new float[size * N_IN];
            float[] l = new float[size * N_OUT];
            for (int i = 0; i < size; i++) {
                for (int j = 0; j < N_IN; j++) {
                    f[i * N_IN + j] = r.nextFloat() * 2 - 1;
                }
                l[i * N_OUT + r.nextInt(N_OUT)] = 1f;
            }
            out.add(new DataSet(Nd4j.create(f, size, N_IN), Nd4j.create(l, size, N_OUT)));
        }
        return out;
    }

    public static float maxAbsDiff(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new AssertionError("lengths differ: " + a.length + " vs " + b.length);
        }
        float max = 0;
        for (int i = 0; i < a.length; i++) {
            max = Math.max(max, Math.abs(a[i] - b[i]));
        }
        return max;
    }
}
