package org.ferrodl.nn.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.graph.ElementWiseVertex;
import org.ferrodl.nn.conf.graph.FrozenVertex;
import org.ferrodl.nn.conf.graph.GraphVertex;
import org.ferrodl.nn.conf.graph.L2NormalizeVertex;
import org.ferrodl.nn.conf.graph.L2Vertex;
import org.ferrodl.nn.conf.graph.LayerVertex;
import org.ferrodl.nn.conf.graph.MergeVertex;
import org.ferrodl.nn.conf.graph.PreprocessorVertex;
import org.ferrodl.nn.conf.graph.ReshapeVertex;
import org.ferrodl.nn.conf.graph.ScaleVertex;
import org.ferrodl.nn.conf.graph.ShiftVertex;
import org.ferrodl.nn.conf.graph.StackVertex;
import org.ferrodl.nn.conf.graph.SubsetVertex;
import org.ferrodl.nn.conf.graph.UnstackVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LossLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.preprocessor.CnnToFeedForwardPreProcessor;
import org.ferrodl.nn.conf.preprocessor.FeedForwardToCnnPreProcessor;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/**
 * The graph configuration: builder behaviour, global defaults resolved into each layer, JSON/YAML/
 * Java/Kryo round trips with every vertex and every vertex option, and build() asking the engine
 * (nIn inference, bad graphs named by vertex).
 */
class ComputationGraphConfigurationTest {

    private static DenseLayer dense(int nIn, int nOut) {
        return new DenseLayer.Builder().nIn(nIn).nOut(nOut).build();
    }

    /** Every vertex type, every option set away from its default, two inputs and two outputs. */
    static ComputationGraphConfiguration everyVertex() {
        return new NeuralNetConfiguration.Builder().seed(7).updater(new Adam(0.01)).activation(Activation.TANH)
                .weightInit(WeightInit.RELU).l2(1e-4).miniBatch(false)
                .graphBuilder()
                .addInputs("a", "b")
                .setInputTypes(InputType.feedForward(4), InputType.convolutional(3, 3, 2))
                .addLayer("d1", dense(4, 6), "a")
                .addLayer("flat", dense(18, 6), new CnnToFeedForwardPreProcessor(3, 3, 2), "b")
                .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "d1", "flat")
                .addVertex("sub", new ElementWiseVertex(ElementWiseVertex.Op.Subtract), "d1", "flat")
                .addVertex("prod", new ElementWiseVertex(ElementWiseVertex.Op.Product), "d1", "flat")
                .addVertex("avg", new ElementWiseVertex(ElementWiseVertex.Op.Average), "d1", "flat", "add")
                .addVertex("max", new ElementWiseVertex(ElementWiseVertex.Op.Max), "d1", "flat")
                .addVertex("merge", new MergeVertex(), "add", "sub", "prod", "avg", "max")
                .addVertex("subset", new SubsetVertex(2, 9), "merge")
                .addVertex("stack", new StackVertex(), "subset", "subset")
                .addVertex("unstack", new UnstackVertex(1, 2), "stack")
                .addVertex("scale", new ScaleVertex(0.5), "unstack")
                .addVertex("shift", new ShiftVertex(-1.25), "scale")
                .addVertex("norm", new L2NormalizeVertex(new int[] {1}, 1e-6), "shift")
                .addVertex("toCnn", new PreprocessorVertex(new FeedForwardToCnnPreProcessor(2, 2, 2)), "norm")
                .addVertex("reshape", new ReshapeVertex('c', new long[] {-1, 8}, null), "toCnn")
                .addVertex("frozen", new FrozenVertex(new LayerVertex(dense(8, 3), null)), "reshape")
                .addLayer("d3", dense(6, 3), "d1")
                .addVertex("dist", new L2Vertex(1e-5), "frozen", "d3")
                .addLayer("out1", new OutputLayer.Builder(LossFunction.MSE).nIn(3).nOut(3)
                        .activation(Activation.IDENTITY).updater(new Nesterovs(0.1, 0.8)).build(), "frozen")
                .addLayer("out2", new LossLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).build(), "dist")
                .setOutputs("out1", "out2")
                .build();
    }

    @Test
    void jsonHasExactlyTheContractShape() throws Exception {
        JsonNode root = new ObjectMapper().readTree(everyVertex().toJson());
        List<String> top = iterToList(root.fieldNames());
        assertEquals(List.of("formatVersion", "seed", "miniBatch", "iterationCount", "epochCount", "networkInputs",
                "networkOutputs", "inputTypes", "vertices"), top);
        assertEquals(1, root.get("formatVersion").asInt());
        assertEquals(7, root.get("seed").asLong());
        assertFalse(root.get("miniBatch").asBoolean());
        assertEquals("[\"a\",\"b\"]", root.get("networkInputs").toString());
        assertEquals("[{\"type\":\"feedForward\",\"size\":4},{\"type\":\"convolutional\",\"height\":3,\"width\":3,"
                + "\"channels\":2}]", root.get("inputTypes").toString());
        JsonNode vs = root.get("vertices");
        assertEquals(21, vs.size());
        // Insertion order (every layer here has one input, so no merge vertex was added).
        assertEquals("d1", vs.get(0).get("name").asText());
        assertEquals(List.of("name", "inputs", "vertex"), iterToList(vs.get(0).fieldNames()));
        JsonNode d1 = vs.get(0).get("vertex");
        assertEquals("LayerVertex", d1.get("type").asText());
        assertTrue(d1.get("preProcessor").isNull());
        assertEquals("d1", d1.get("layer").get("name").asText(), "a layer is named after its vertex");
        assertEquals("TANH", d1.get("layer").get("activation").asText(), "global activation resolved in");
        assertEquals(1e-4, d1.get("layer").get("l2").asDouble());
        assertEquals("{\"type\":\"CnnToFeedForwardPreProcessor\",\"inputHeight\":3,\"inputWidth\":3,"
                + "\"numChannels\":2}", vs.get(1).get("vertex").get("preProcessor").toString());
        Map<String, String> expected = Map.ofEntries(
                Map.entry("add", "{\"type\":\"ElementWiseVertex\",\"op\":\"Add\"}"),
                Map.entry("sub", "{\"type\":\"ElementWiseVertex\",\"op\":\"Subtract\"}"),
                Map.entry("merge", "{\"type\":\"MergeVertex\"}"),
                Map.entry("subset", "{\"type\":\"SubsetVertex\",\"from\":2,\"to\":9}"),
                Map.entry("stack", "{\"type\":\"StackVertex\"}"),
                Map.entry("unstack", "{\"type\":\"UnstackVertex\",\"from\":1,\"stackSize\":2}"),
                Map.entry("scale", "{\"type\":\"ScaleVertex\",\"scaleFactor\":0.5}"),
                Map.entry("shift", "{\"type\":\"ShiftVertex\",\"shiftFactor\":-1.25}"),
                Map.entry("norm", "{\"type\":\"L2NormalizeVertex\",\"dimension\":[1],\"eps\":1.0E-6}"),
                Map.entry("toCnn", "{\"type\":\"PreprocessorVertex\",\"preProcessor\":{\"type\":"
                        + "\"FeedForwardToCnnPreProcessor\",\"inputHeight\":2,\"inputWidth\":2,\"numChannels\":2}}"),
                Map.entry("reshape", "{\"type\":\"ReshapeVertex\",\"order\":\"c\",\"newShape\":[-1,8],"
                        + "\"maskShape\":null}"),
                Map.entry("dist", "{\"type\":\"L2Vertex\",\"eps\":1.0E-5}"));
        int seen = 0;
        for (JsonNode v : vs) {
            String want = expected.get(v.get("name").asText());
            if (want != null) {
                assertEquals(want, v.get("vertex").toString(), v.get("name").asText());
                seen++;
            }
        }
        assertEquals(expected.size(), seen);
        JsonNode frozen = vs.get(16);
        assertEquals("frozen", frozen.get("name").asText());
        assertEquals("FrozenVertex", frozen.get("vertex").get("type").asText());
        assertEquals("LayerVertex", frozen.get("vertex").get("vertex").get("type").asText());
        assertEquals("frozen", frozen.get("vertex").get("vertex").get("layer").get("name").asText(),
                "a frozen layer is named after its vertex too");
        assertEquals("[\"frozen\",\"d3\"]", vs.get(18).get("inputs").toString());
        // The output layer's own updater wins over the global one.
        assertEquals("Nesterovs", vs.get(19).get("vertex").get("layer").get("updater").get("type").asText());
    }

    private static <T> List<T> iterToList(java.util.Iterator<T> it) {
        List<T> out = new java.util.ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void jsonYamlJavaAndKryoRoundTripsKeepEveryVertexAndOption() throws Exception {
        ComputationGraphConfiguration c = everyVertex();
        c.setIterationCount(12);
        c.setEpochCount(3);
        ComputationGraphConfiguration fromJson = ComputationGraphConfiguration.fromJson(c.toJson());
        ComputationGraphConfiguration fromYaml = ComputationGraphConfiguration.fromYaml(c.toYaml());
        for (ComputationGraphConfiguration back : new ComputationGraphConfiguration[] {fromJson, fromYaml,
            SerializationUtil.javaRoundTrip(c), (ComputationGraphConfiguration) SerializationUtil.kryoRoundTrip(c),
            c.clone()}) {
            assertEquals(c, back);
            assertEquals(c.hashCode(), back.hashCode());
            assertEquals(c.toJson(), back.toJson());
            assertEquals(12, back.getIterationCount());
            assertEquals(3, back.getEpochCount());
        }
        assertFalse(c.toYaml().contains("!<"), "no YAML tags: the type is an ordinary property");
        // Vertex objects come back with their options.
        Map<String, GraphVertex> v = fromYaml.getVertices();
        assertEquals(ElementWiseVertex.Op.Max, ((ElementWiseVertex) v.get("max")).getOp());
        assertEquals(9, ((SubsetVertex) v.get("subset")).getTo());
        assertEquals(2, ((UnstackVertex) v.get("unstack")).getStackSize());
        assertEquals(-1.25, ((ShiftVertex) v.get("shift")).getShiftFactor());
        assertEquals(1e-6, ((L2NormalizeVertex) v.get("norm")).getEps());
        assertEquals(8L, ((ReshapeVertex) v.get("reshape")).getNewShape()[1]);
        assertEquals(1e-5, ((L2Vertex) v.get("dist")).getEps());
        LayerVertex frozen = (LayerVertex) ((FrozenVertex) v.get("frozen")).getUnderlying();
        assertEquals(8L, ((DenseLayer) frozen.getLayer()).getNIn());
        assertEquals(new CnnToFeedForwardPreProcessor(3, 3, 2), ((LayerVertex) v.get("flat")).getPreProcessor());
        assertEquals(List.of("frozen", "d3"), fromJson.getVertexInputs().get("dist"));
        assertEquals(List.of("out1", "out2"), fromJson.getNetworkOutputs());
        assertEquals(InputType.convolutional(3, 3, 2), fromJson.getNetworkInputTypes().get(1));
        // The clone is deep.
        ComputationGraphConfiguration copy = c.clone();
        ((DenseLayer) ((LayerVertex) copy.getVertices().get("d1")).getLayer()).setNOut(99L);
        assertEquals(6L, ((DenseLayer) ((LayerVertex) c.getVertices().get("d1")).getLayer()).getNOut());
    }

    @Test
    void defaultsOfTheVertexConstructorsAreTheReferences() throws Exception {
        assertEquals(1e-8, new L2Vertex().getEps());
        assertEquals(1e-8, new L2NormalizeVertex().getEps());
        assertEquals(0, new L2NormalizeVertex().getDimension().length);
        ReshapeVertex r = new ReshapeVertex(-1, 784);
        assertEquals('c', r.getOrder());
        assertNull(r.getMaskShape());
        assertEquals(1, new CnnToFeedForwardPreProcessor(28, 28).getNumChannels());
        assertEquals(1, new FeedForwardToCnnPreProcessor(28, 28).getNumChannels());
        assertEquals(new MergeVertex(), new MergeVertex());
        assertFalse(new ScaleVertex(1).equals(new ShiftVertex(1)));
        // Options the engine refuses today still serialize (the vertex alone, through the mapper).
        ObjectMapper m = org.ferrodl.nn.conf.serde.JsonMappers.getMapper();
        ReshapeVertex f = new ReshapeVertex('f', new long[] {-1, 8}, new long[] {-1, 1});
        assertTrue(m.writeValueAsString(f).contains("\"order\" : \"f\""), m.writeValueAsString(f));
        assertEquals(f, m.readValue(m.writeValueAsString(f), GraphVertex.class));
        // Options absent from the JSON take these defaults too.
        ComputationGraphConfiguration withDefaults = new NeuralNetConfiguration.Builder().seed(1).graphBuilder()
                .addInputs("in").setInputTypes(InputType.feedForward(4))
                .addVertex("n", new L2NormalizeVertex(), "in")
                .addVertex("r", new ReshapeVertex(-1, 4), "n")
                .addLayer("o", new LossLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).build(), "r")
                .setOutputs("o").build();
        com.fasterxml.jackson.databind.node.ObjectNode tree = (com.fasterxml.jackson.databind.node.ObjectNode)
                new ObjectMapper().readTree(withDefaults.toJson());
        ((com.fasterxml.jackson.databind.node.ObjectNode) tree.get("vertices").get(0).get("vertex"))
                .remove(List.of("dimension", "eps"));
        ((com.fasterxml.jackson.databind.node.ObjectNode) tree.get("vertices").get(1).get("vertex"))
                .remove(List.of("order", "maskShape"));
        tree.remove("miniBatch");
        assertFalse(tree.toString().contains("eps"));
        ComputationGraphConfiguration minimal = ComputationGraphConfiguration.fromJson(tree.toString());
        assertEquals(new L2NormalizeVertex(), minimal.getVertices().get("n"));
        assertEquals(new ReshapeVertex(-1L, 4L), minimal.getVertices().get("r"));
        assertTrue(minimal.isMiniBatch());
    }

    @Test
    void builderAddsAMergeForSeveralLayerInputsAndAppends() {
        ComputationGraphConfiguration c = new NeuralNetConfiguration.Builder().seed(1).graphBuilder()
                .addInputs("x", "y")
                .setInputTypes(InputType.feedForward(2), InputType.feedForward(3))
                .addLayer("both", new DenseLayer.Builder().nOut(5).build(), "x", "y")
                .appendLayer("next", dense(5, 4))
                .appendVertex("half", new ScaleVertex(0.5))
                .appendLayer("out", new OutputLayer.Builder().nIn(4).nOut(2).build())
                .setOutputs("out")
                .build();
        assertEquals(5L, ((DenseLayer) c.getConf("both").getLayer()).getNIn(), "2 + 3 merged inputs");
        assertEquals(List.of("both-merge", "both", "next", "half", "out"), List.copyOf(c.getVertices().keySet()));
        assertEquals(new MergeVertex(), c.getVertices().get("both-merge"));
        assertEquals(List.of("x", "y"), c.getVertexInputs().get("both-merge"));
        assertEquals(List.of("both-merge"), c.getVertexInputs().get("both"));
        assertEquals(List.of("both"), c.getVertexInputs().get("next"));
        assertEquals(List.of("next"), c.getVertexInputs().get("half"));
        assertEquals(List.of("half"), c.getVertexInputs().get("out"));
        // Global defaults (the reference's: SIGMOID, XAVIER, Sgd 1e-3) went into every layer.
        Layer next = ((LayerVertex) c.getVertices().get("next")).getLayer();
        assertEquals("next", next.getLayerName());
        assertEquals(Activation.SIGMOID, ((DenseLayer) next).getActivation());
        assertEquals(WeightInit.XAVIER, ((DenseLayer) next).getWeightInit());
        assertEquals(Activation.SIGMOID, ((DenseLayer) c.getConf("next").getLayer()).getActivation());
        assertEquals(1, c.getConf("out").getSeed());
        assertThrows(IllegalArgumentException.class, () -> c.getConf("half"));

        IllegalStateException first = assertThrows(IllegalStateException.class, () -> new NeuralNetConfiguration
                .Builder().graphBuilder().addInputs("in").appendLayer("d", dense(1, 1)));
        assertTrue(first.getMessage().contains("appendLayer(\"d\")"), first.getMessage());
    }

    @Test
    void builderKeepsTheUsersLayersUntouched() {
        DenseLayer mine = new DenseLayer.Builder().nIn(3).nOut(2).build();
        ComputationGraphConfiguration.GraphBuilder b = new NeuralNetConfiguration.Builder().activation(Activation.RELU)
                .graphBuilder().addInputs("in").addLayer("d", mine, "in")
                .addLayer("o", new OutputLayer.Builder().nIn(2).nOut(1).build(), "d").setOutputs("o");
        ComputationGraphConfiguration c = b.build();
        assertNull(mine.getActivation(), "build() resolves copies");
        assertNull(mine.getLayerName());
        assertNotSame(mine, ((LayerVertex) c.getVertices().get("d")).getLayer());
        assertEquals(Activation.RELU, ((DenseLayer) ((LayerVertex) c.getVertices().get("d")).getLayer())
                .getActivation());
    }

    @Test
    void removeVertexWithAndWithoutConnections() {
        ComputationGraphConfiguration.GraphBuilder b = new NeuralNetConfiguration.Builder().graphBuilder()
                .addInputs("in")
                .addLayer("a", dense(2, 2), "in")
                .addLayer("b", dense(2, 2), "in")
                .addVertex("sum", new ElementWiseVertex(ElementWiseVertex.Op.Add), "a", "b")
                .addLayer("out", new OutputLayer.Builder().nIn(2).nOut(1).build(), "sum")
                .setOutputs("out", "b");
        b.removeVertex("b");
        assertEquals(List.of("a"), b.getVertexInputs().get("sum"));
        assertEquals(List.of("out"), b.getNetworkOutputs());
        assertFalse(b.getVertices().containsKey("b"));
        b.removeVertex("a", false);
        assertEquals(List.of("a"), b.getVertexInputs().get("sum"), "connections kept for the caller to rewire");
        // The name is free again.
        b.addLayer("a", dense(2, 2), "in");
        assertEquals(List.of("sum", "out", "a"), List.copyOf(b.getVertices().keySet()));
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> b.removeVertex("zzz"));
        assertTrue(none.getMessage().startsWith("no vertex or network input named \"zzz\""), none.getMessage());
    }

    @Test
    void javaApiChecksNames() {
        ComputationGraphConfiguration.GraphBuilder b = new NeuralNetConfiguration.Builder().graphBuilder()
                .addInputs("in").addLayer("d", dense(1, 1), "in");
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> b.addVertex("d", new MergeVertex(), "in"));
        assertEquals("the name \"d\" is already used by a vertex (LayerVertex)", twice.getMessage());
        IllegalArgumentException input = assertThrows(IllegalArgumentException.class,
                () -> b.addLayer("in", dense(1, 1), "d"));
        assertEquals("the name \"in\" is already used by a network input", input.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.addInputs("in"));
        assertThrows(IllegalArgumentException.class, () -> b.addLayer(null, dense(1, 1), "in"));
        assertThrows(IllegalArgumentException.class, () -> b.addLayer("", dense(1, 1), "in"));
        IllegalArgumentException nullInput = assertThrows(IllegalArgumentException.class,
                () -> b.addVertex("m", new MergeVertex(), "d", null));
        assertTrue(nullInput.getMessage().startsWith("inputs of vertex \"m\" must not contain null"),
                nullInput.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.setInputTypes(InputType.feedForward(1), null));
        assertThrows(IllegalArgumentException.class, () -> b.inputPreProcessor("nope",
                new CnnToFeedForwardPreProcessor()));
        b.inputPreProcessor("d", new FeedForwardToCnnPreProcessor(1, 1, 1));
        assertEquals(new FeedForwardToCnnPreProcessor(1, 1, 1),
                ((LayerVertex) b.getVertices().get("d")).getPreProcessor());
    }

    @Test
    void malformedDocumentsAreConfigErrors() {
        String ok = everyVertex().toJson();
        DL4JInvalidConfigException version = assertThrows(DL4JInvalidConfigException.class,
                () -> ComputationGraphConfiguration.fromJson(ok.replace("\"formatVersion\" : 1", "\"formatVersion\" : 2")));
        assertTrue(version.getMessage().startsWith("unsupported ComputationGraphConfiguration formatVersion 2"),
                version.getMessage());
        DL4JInvalidConfigException unknown = assertThrows(DL4JInvalidConfigException.class,
                () -> ComputationGraphConfiguration.fromJson(ok.replace("\"scaleFactor\"", "\"scale\"")));
        assertTrue(unknown.getMessage().contains("scale"), unknown.getMessage());
        DL4JInvalidConfigException dup = assertThrows(DL4JInvalidConfigException.class,
                () -> ComputationGraphConfiguration.fromJson(ok.replace("\"name\" : \"sub\"", "\"name\" : \"add\"")));
        assertTrue(dup.getMessage().endsWith("duplicate name \"add\": two vertices are called that"), dup.getMessage());
        DL4JInvalidConfigException noOutputs = assertThrows(DL4JInvalidConfigException.class,
                () -> ComputationGraphConfiguration.fromJson("{\"formatVersion\":1,\"seed\":1,\"networkInputs\":[],"
                        + "\"vertices\":[]}"));
        assertTrue(noOutputs.getMessage().endsWith("no \"networkOutputs\" list"), noOutputs.getMessage());
        assertThrows(DL4JInvalidConfigException.class, () -> ComputationGraphConfiguration.fromJson("{"));
        assertThrows(DL4JInvalidConfigException.class, () -> ComputationGraphConfiguration.fromJson("{\"formatVersion\""
                + ":1,\"seed\":1,\"networkInputs\":[],\"networkOutputs\":[],\"vertices\":[{\"name\":\"v\",\"inputs\":[],"
                + "\"vertex\":{\"type\":\"NoSuchVertex\"}}]}"));
    }

    private static OutputLayer softmaxOut(int nOut) {
        return new OutputLayer.Builder(LossFunction.MCXENT).nOut(nOut).activation(Activation.SOFTMAX).build();
    }

    @Test
    void buildInfersEveryUnsetNInThroughTheEngine() {
        ComputationGraphConfiguration c = new NeuralNetConfiguration.Builder().seed(3).graphBuilder()
                .addInputs("img", "meta")
                .setInputTypes(InputType.convolutionalFlat(8, 8, 1), InputType.feedForward(5))
                .addLayer("conv", new ConvolutionLayer.Builder(3, 3).nOut(4).build(), "img")
                .addVertex("flat", new PreprocessorVertex(new CnnToFeedForwardPreProcessor(6, 6, 4)), "conv")
                .addLayer("dense", new DenseLayer.Builder().nOut(7).build(), "flat", "meta")
                .addLayer("out", softmaxOut(3), "dense")
                .setOutputs("out")
                .build();
        assertEquals(1L, ((ConvolutionLayer) c.getConf("conv").getLayer()).getNIn());
        // conv output 4 x 6 x 6 flattened, merged with the 5 meta features.
        assertEquals(4L * 6 * 6 + 5, ((DenseLayer) c.getConf("dense").getLayer()).getNIn());
        assertEquals(7L, ((OutputLayer) c.getConf("out").getLayer()).getNIn());
        assertEquals(List.of("flat", "meta"), c.getVertexInputs().get("dense-merge"));
        Map<String, InputType> types = c.getLayerActivationTypes();
        assertEquals(InputType.convolutional(6, 6, 4), types.get("conv"));
        assertEquals(InputType.feedForward(144), types.get("flat"));
        assertEquals(InputType.feedForward(149), types.get("dense-merge"));
        assertEquals(InputType.feedForward(3), types.get("out"));
        assertEquals(InputType.feedForward(5), types.get("meta"));
        // And the configuration round-trips with the inferred sizes.
        assertEquals(c, ComputationGraphConfiguration.fromJson(c.toJson()));
    }

    private static DL4JInvalidConfigException badGraph(ComputationGraphConfiguration.GraphBuilder b) {
        return assertThrows(DL4JInvalidConfigException.class, b::build);
    }

    private static ComputationGraphConfiguration.GraphBuilder twoBranches() {
        return new NeuralNetConfiguration.Builder().seed(1).graphBuilder().addInputs("in")
                .addLayer("a", dense(4, 3), "in")
                .addLayer("b", dense(4, 5), "in");
    }

    @Test
    void badGraphsFailAtBuildNamingTheVertex() {
        DL4JInvalidConfigException cycle = badGraph(new NeuralNetConfiguration.Builder().graphBuilder()
                .addInputs("in")
                .addVertex("m", new MergeVertex(), "in", "loop")
                .addLayer("loop", dense(8, 4), "m")
                .addLayer("out", softmaxOut(2), "loop")
                .setOutputs("out"));
        assertTrue(cycle.getMessage().startsWith("the graph has a cycle: \"m\" -> \"loop\" -> \"m\""),
                cycle.getMessage());

        DL4JInvalidConfigException unknown = badGraph(twoBranches()
                .addLayer("out", softmaxOut(2), "nowhere").setOutputs("out"));
        assertTrue(unknown.getMessage().startsWith("vertex \"out\" (OutputLayer): unknown input \"nowhere\""),
                unknown.getMessage());

        DL4JInvalidConfigException merge = badGraph(new NeuralNetConfiguration.Builder().graphBuilder()
                .addInputs("img", "vec")
                .setInputTypes(InputType.convolutional(4, 4, 1), InputType.feedForward(3))
                .addVertex("m", new MergeVertex(), "img", "vec")
                .addLayer("out", softmaxOut(2), "m").setOutputs("out"));
        assertTrue(merge.getMessage().startsWith("vertex \"m\" (MergeVertex): "), merge.getMessage());

        DL4JInvalidConfigException add = badGraph(twoBranches()
                .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "a", "b")
                .addLayer("out", softmaxOut(2), "add").setOutputs("out"));
        assertTrue(add.getMessage().startsWith("vertex \"add\" (ElementWiseVertex): "), add.getMessage());
        assertTrue(add.getMessage().contains("3") && add.getMessage().contains("5"), add.getMessage());

        DL4JInvalidConfigException notLoss = badGraph(twoBranches()
                .addVertex("m", new MergeVertex(), "a", "b").setOutputs("m"));
        assertTrue(notLoss.getMessage().startsWith("vertex \"m\" (MergeVertex): a network output must be an "
                + "OutputLayer or LossLayer"), notLoss.getMessage());

        // Options the engine cannot honour are refused with the reason.
        DL4JInvalidConfigException fOrder = badGraph(twoBranches()
                .addVertex("r", new ReshapeVertex('f', new long[] {-1, 3}, null), "a")
                .addLayer("out", softmaxOut(2), "r", "b").setOutputs("out"));
        assertTrue(fOrder.getMessage().startsWith("vertex \"r\" (ReshapeVertex): order 'f' is not supported"),
                fOrder.getMessage());

        DL4JInvalidConfigException mask = badGraph(twoBranches()
                .addVertex("r", new ReshapeVertex('c', new long[] {-1, 3}, new long[] {-1, 1}), "a")
                .addLayer("out", softmaxOut(2), "r", "b").setOutputs("out"));
        assertTrue(mask.getMessage().startsWith("vertex \"r\" (ReshapeVertex): maskShape is not supported"),
                mask.getMessage());

        DL4JInvalidConfigException noOutputs = badGraph(twoBranches());
        assertTrue(noOutputs.getMessage().contains("setOutputs"), noOutputs.getMessage());

        // Duplicate names cannot reach the engine from the builder (checked as they are added), but
        // can from JSON: the engine names them.
        String dup = everyVertex().toJson().replace("\"name\" : \"sub\"", "\"name\" : \"d1\"");
        DL4JInvalidConfigException dupJson = assertThrows(DL4JInvalidConfigException.class,
                () -> ComputationGraphConfiguration.fromJson(dup));
        assertTrue(dupJson.getMessage().contains("duplicate name \"d1\""), dupJson.getMessage());
    }
}
