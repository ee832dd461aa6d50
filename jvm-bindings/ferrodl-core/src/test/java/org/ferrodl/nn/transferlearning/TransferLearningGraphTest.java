package org.ferrodl.nn.transferlearning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.ferrodl.exception.FerroIllegalArgumentException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;

/** TransferLearning.GraphBuilder end to end: parameters copied by vertex, frozen ones stay frozen. */
class TransferLearningGraphTest {

    private static MultiDataSet data(long seed, int nOut) {
        INDArray f = Nd4j.rand(seed, new long[] {16, 4});
        float[] l = new float[16 * nOut];
        for (int i = 0; i < 16; i++) {
            l[i * nOut + (f.getFloat(i, 0) > 0.5f ? 1 : 0)] = 1;
        }
        return new MultiDataSet(f, Nd4j.create(l, 16, nOut));
    }

    private static ComputationGraph trained() {
        ComputationGraph g = new ComputationGraph(GraphEditTest.original());
        g.init();
        for (int i = 0; i < 5; i++) {
            g.fit(data(1, 3));
        }
        return g;
    }

    @Test
    void featureExtractorKeepsTrainedParametersAndFreezesThem() {
        try (ComputationGraph orig = trained();
             ComputationGraph tuned = new TransferLearning.GraphBuilder(orig)
                     .fineTuneConfiguration(new FineTuneConfiguration.Builder().updater(new Adam(0.01)).seed(5).build())
                     .setFeatureExtractor("d2")
                     .removeVertexKeepConnections("out")
                     .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(2)
                             .activation(Activation.SOFTMAX).build(), "add")
                     .build()) {
            Map<String, INDArray> before = orig.paramTable();
            Map<String, INDArray> after = tuned.paramTable();
            for (String k : new String[] {"d1_W", "d1_b", "d2_W", "d2_b", "b_W", "b_b"}) {
                assertEquals(before.get(k), after.get(k), k + " copied bit for bit");
            }
            assertEquals(2, after.get("out_W").size(1));
            assertTrue(tuned.getConfiguration().getConf("d1").getLayer() instanceof FrozenLayer);
            assertEquals(0, tuned.getIterationCount());

            for (int i = 0; i < 3; i++) {
                tuned.fit(data(2, 2));
            }
            Map<String, INDArray> trainedAfter = tuned.paramTable();
            assertEquals(before.get("d1_W"), trainedAfter.get("d1_W"), "frozen: unchanged by training");
            assertEquals(before.get("d2_b"), trainedAfter.get("d2_b"));
            assertNotEquals(before.get("b_W"), trainedAfter.get("b_W"), "b is not frozen and trains");
            // The original is untouched.
            assertEquals(before, orig.paramTable());
        }
    }

    @Test
    void nOutReplaceGivesFreshParametersToTheChangedLayersOnly() {
        try (ComputationGraph orig = trained();
             ComputationGraph tuned = new TransferLearning.GraphBuilder(orig)
                     .nOutReplace("d1", 8, WeightInit.XAVIER)
                     .build()) {
            Map<String, INDArray> before = orig.paramTable();
            Map<String, INDArray> after = tuned.paramTable();
            assertEquals(8, after.get("d1_W").size(1));
            assertEquals(8, after.get("d2_W").size(0));
            assertEquals(8, after.get("b_W").size(0));
            assertEquals(before.get("out_W"), after.get("out_W"), "out keeps its trained parameters");
            assertEquals(before.get("out_b"), after.get("out_b"));
            INDArray out = tuned.outputSingle(data(3, 3).getFeatures(0));
            assertEquals(3, out.size(1));
        }
    }

    @Test
    void closedOrUninitializedOriginalsAreRefused() {
        ComputationGraph closed = trained();
        closed.close();
        assertThrows(FerroIllegalArgumentException.class, () -> new TransferLearning.GraphBuilder(closed));
        try (ComputationGraph fresh = new ComputationGraph(GraphEditTest.original())) {
            FerroIllegalArgumentException e = assertThrows(FerroIllegalArgumentException.class,
                    () -> new TransferLearning.GraphBuilder(fresh));
            assertTrue(e.getMessage().contains("not initialized"), e.getMessage());
        }
    }
}
