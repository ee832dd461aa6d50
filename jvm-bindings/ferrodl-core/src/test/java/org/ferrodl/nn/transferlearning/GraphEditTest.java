package org.ferrodl.nn.transferlearning;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.ElementWiseVertex;
import org.ferrodl.nn.conf.graph.LayerVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;

/** Transfer learning on a graph, configuration side: freezing, size changes, removal, fine-tuning. */
class GraphEditTest {

    /** in(4) -> d1(5) -> d2(6) -+-> add -> out(3); d1 -> b(6) -+ */
    static ComputationGraphConfiguration original() {
        return new NeuralNetConfiguration.Builder().seed(11).updater(new Sgd(0.1)).activation(Activation.TANH)
                .graphBuilder()
                .addInputs("in").setInputTypes(InputType.feedForward(4))
                .addLayer("d1", new DenseLayer.Builder().nOut(5).build(), "in")
                .addLayer("d2", new DenseLayer.Builder().nOut(6).build(), "d1")
                .addLayer("b", new DenseLayer.Builder().nOut(6).build(), "d1")
                .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "d2", "b")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX)
                        .build(), "add")
                .setOutputs("out")
                .build();
    }

    private static Layer layer(ComputationGraphConfiguration c, String name) {
        return ((LayerVertex) c.getVertices().get(name)).getLayer();
    }

    private static long nIn(ComputationGraphConfiguration c, String name) {
        Layer l = layer(c, name);
        if (l instanceof FrozenLayer) {
            l = ((FrozenLayer) l).getLayer();
        }
        return ((FeedForwardLayer) l).getNIn();
    }

    @Test
    void featureExtractorFreezesTheVertexAndEverythingBeforeIt() {
        GraphEdit e = new GraphEdit(original());
        e.setFeatureExtractor("d2");
        e.fineTuneConfiguration(new FineTuneConfiguration.Builder().updater(new Adam(1e-3)).build());
        GraphEdit.Result r = e.build();
        assertTrue(layer(r.conf, "d1") instanceof FrozenLayer);
        assertTrue(layer(r.conf, "d2") instanceof FrozenLayer);
        assertFalse(layer(r.conf, "b") instanceof FrozenLayer, "b is not before d2");
        assertFalse(layer(r.conf, "out") instanceof FrozenLayer);
        assertEquals(Set.of("d1", "d2", "b", "out"), r.keptParameters);
        // Fine-tuning reaches the trainable kept layers only.
        assertEquals(new Adam(1e-3), ((BaseLayer) layer(r.conf, "b")).getIUpdater());
        assertEquals(new Sgd(0.1), ((BaseLayer) ((FrozenLayer) layer(r.conf, "d1")).getLayer()).getIUpdater());
        assertEquals(11, r.conf.getSeed());
        assertEquals(List.of("d2", "b"), r.conf.getVertexInputs().get("add"));
    }

    @Test
    void nOutReplaceReinitializesTheLayerAndItsConsumers() {
        GraphEdit e = new GraphEdit(original());
        e.nOutReplace("d1", 7, TransferLearning.Init.of(WeightInit.RELU, "scheme"),
                TransferLearning.Init.of(WeightInit.ZERO, "schemeNext"));
        GraphEdit.Result r = e.build();
        assertEquals(7L, ((DenseLayer) layer(r.conf, "d1")).getNOut());
        assertEquals(7L, nIn(r.conf, "d2"), "re-inferred by the engine");
        assertEquals(7L, nIn(r.conf, "b"));
        assertEquals(6L, nIn(r.conf, "out"), "beyond the next layers nothing changes");
        assertEquals(WeightInit.RELU, ((BaseLayer) layer(r.conf, "d1")).getWeightInit());
        assertEquals(WeightInit.ZERO, ((BaseLayer) layer(r.conf, "d2")).getWeightInit());
        assertEquals(WeightInit.ZERO, ((BaseLayer) layer(r.conf, "b")).getWeightInit());
        assertEquals(Set.of("out"), r.keptParameters);

        DL4JInvalidConfigException freezeChanged = assertThrows(DL4JInvalidConfigException.class, () -> {
            GraphEdit f = new GraphEdit(original());
            f.nOutReplace("d2", 9, TransferLearning.Init.of(WeightInit.XAVIER, "scheme"), null);
            f.setFeatureExtractor("d2");
            f.build();
        });
        assertTrue(freezeChanged.getMessage().contains("vertex \"d2\""), freezeChanged.getMessage());
        assertThrows(DL4JInvalidConfigException.class, () -> new GraphEdit(original()).nOutReplace("add", 3,
                TransferLearning.Init.of(WeightInit.XAVIER, "scheme"), null));
        DL4JInvalidConfigException unknown = assertThrows(DL4JInvalidConfigException.class,
                () -> new GraphEdit(original()).setFeatureExtractor("nope"));
        assertTrue(unknown.getMessage().startsWith("setFeatureExtractor(\"nope\"): no vertex"), unknown.getMessage());
    }

    @Test
    void removeAndReplaceTheOutputAndABranch() {
        GraphEdit e = new GraphEdit(original());
        e.fineTuneConfiguration(new FineTuneConfiguration.Builder().updater(new Adam(5e-4)).seed(3).build());
        e.removeVertexAndConnections("b");
        e.removeVertexKeepConnections("out");
        e.addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build(),
                null, "add");
        GraphEdit.Result r = e.build();
        assertFalse(r.conf.getVertices().containsKey("b"));
        assertEquals(List.of("d2"), r.conf.getVertexInputs().get("add"));
        assertEquals(2L, ((OutputLayer) layer(r.conf, "out")).getNOut());
        assertEquals(6L, nIn(r.conf, "out"));
        assertEquals(new Adam(5e-4), ((BaseLayer) layer(r.conf, "out")).getIUpdater(), "added: fine-tune globals");
        assertEquals(3, r.conf.getSeed());
        assertEquals(Set.of("d1", "d2"), r.keptParameters);
        // A removed output without replacement leaves a graph the engine refuses, naming the problem.
        GraphEdit broken = new GraphEdit(original());
        broken.removeVertexAndConnections("out");
        DL4JInvalidConfigException ex = assertThrows(DL4JInvalidConfigException.class, broken::build);
        assertTrue(ex.getMessage().startsWith("TransferLearning: the edited graph is invalid: "), ex.getMessage());
    }

    @Test
    void keptParametersAreCopiedByKeyAndTheRestStaysFresh() {
        Map<String, INDArray> orig = new LinkedHashMap<>();
        orig.put("d1_W", Nd4j.create(new float[] {1, 2, 3, 4}, 2, 2));
        orig.put("d1_b", Nd4j.create(new float[] {5, 6}, 1, 2));
        orig.put("my_layer_W", Nd4j.create(new float[] {7}, 1, 1));
        Map<String, INDArray> fresh = new LinkedHashMap<>();
        fresh.put("d1_W", Nd4j.zeros(2, 2));
        fresh.put("d1_b", Nd4j.zeros(1, 2));
        fresh.put("my_layer_W", Nd4j.create(new float[] {-1}, 1, 1));
        fresh.put("new_W", Nd4j.create(new float[] {9, 9}, 1, 2));
        INDArray flat = GraphEdit.copyKeptParameters(orig, fresh, Set.of("d1"));
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6, -1, 9, 9}, NDArray.internalData(flat));
        INDArray withUnderscore = GraphEdit.copyKeptParameters(orig, fresh, Set.of("my_layer"));
        assertEquals(7f, withUnderscore.getFloat(0, 6));
        fresh.put("d1_b", Nd4j.zeros(1, 3));
        assertThrows(IllegalStateException.class, () -> GraphEdit.copyKeptParameters(orig, fresh, Set.of("d1")));
    }
}
