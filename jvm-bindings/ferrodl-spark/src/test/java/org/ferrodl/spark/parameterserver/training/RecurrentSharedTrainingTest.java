package org.ferrodl.spark.parameterserver.training;

import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.LSTM;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.junit.jupiter.api.Test;

/**
 * A recurrent MultiLayerNetwork under gradient sharing: time series [N, C, T] reach the native
 * replicas, and so do their features masks. A masked step zeroes the LSTM's state, so garbage in
 * the features of a masked step in the middle of a sequence changes nothing when the mask arrives
 * (and changes the result when only the labels mask is given). One worker, one partition: the fit
 * is deterministic. About 3 s.
 */
class RecurrentSharedTrainingTest {
    private static final int T = 5;

    private static MultiLayerConfiguration conf() {
        return new NeuralNetConfiguration.Builder().seed(23).updater(new Sgd(0.1)).list()
                .layer(new LSTM.Builder().nIn(3).nOut(6).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(6).nOut(2)
                        .build())
                .build();
    }

    /** 6 DataSets of 4 sequences of 5 steps; step 2 is masked, its features are {@code hole}. */
    private static List<DataSet> data(float hole, boolean featuresMask) {
        Random r = new Random(9);
        List<DataSet> out = new ArrayList<>();
        for (int d = 0; d < 6; d++) {
            float[] f = new float[4 * 3 * T];
            float[] l = new float[4 * 2 * T];
            float[] m = new float[4 * T];
            for (int i = 0; i < 4; i++) {
                for (int s = 0; s < T; s++) {
                    for (int c = 0; c < 3; c++) {
                        f[(i * 3 + c) * T + s] = s == 2 ? hole : r.nextFloat() * 2 - 1;
                    }
                    l[(i * 2 + (f[(i * 3) * T + s] > 0 ? 1 : 0)) * T + s] = 1;
                    m[i * T + s] = s == 2 ? 0 : 1;
                }
            }
            out.add(new DataSet(Nd4j.create(f, 4, 3, T), Nd4j.create(l, 4, 2, T),
                    featuresMask ? Nd4j.create(m, 4, T) : null, Nd4j.create(m, 4, T)));
        }
        return out;
    }

    private static float[] fit(List<DataSet> data) {
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(4).batchSizePerWorker(8).repartitioner(null)
                .rddTrainingApproach(RDDTrainingApproach.Direct).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(), tm);
        spark.fit(sc().parallelize(data, 1));
        assertEquals(3, spark.getNetwork().getIterationCount(), "24 sequences in minibatches of 8");
        assertTrue(Double.isFinite(spark.getScore()));
        return spark.getNetwork().params().toFloatVector();
    }

    @Test
    void timeSeriesAndFeatureMasksReachTheReplicas() {
        float[] zeros = fit(data(0f, true));
        float[] garbage = fit(data(7f, true));
        assertArrayEquals(zeros, garbage, "a masked step's features do not matter when the mask arrives");
        float[] start;
        try (var net = new org.ferrodl.nn.multilayer.MultiLayerNetwork(conf())) {
            net.init();
            start = net.params().toFloatVector();
        }
        assertTrue(maxAbsDiff(start, zeros) > 1e-4f, "the network trained");
        // control: without the features mask the garbage flows into the later steps
        float[] unmaskedZeros = fit(data(0f, false));
        float[] unmaskedGarbage = fit(data(7f, false));
        assertTrue(maxAbsDiff(unmaskedZeros, unmaskedGarbage) > 1e-4f,
                "without a features mask the masked step's features change the result");
    }
}
