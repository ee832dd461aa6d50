package org.ferrodl.nn.conf.layers;

import static org.ferrodl.nn.conf.ConfTestSupport.fieldNames;
import static org.ferrodl.nn.conf.ConfTestSupport.layerJson;
import static org.ferrodl.nn.conf.ConfTestSupport.network;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;

/**
 * Pins the configuration JSON contract of docs/ARCHITECTURE.md §2: the exact field names of one
 * layer of each type, the {@code type} strings, the input type objects and one whole document.
 */
class LayerJsonGoldenTest {

    private static final List<String> COMMON = List.of("type", "name", "dropOut");
    private static final List<String> BASE = List.of("activation", "weightInit", "weightInitDistribution",
            "biasInit", "l1", "l2", "l1Bias", "l2Bias", "weightDecay", "weightDecayBias", "updater", "biasUpdater",
            "gradientNormalization", "gradientNormalizationThreshold");

    private static Set<String> fields(List<String> base, String... own) {
        return Stream.concat(Stream.concat(COMMON.stream(), base.stream()), Arrays.stream(own))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** One layer of each type, in networks where it is valid; key: expected type string. */
    private static Map<String, JsonNode> oneOfEach() throws Exception {
        LossLayer loss = new LossLayer.Builder().build();
        GlobalPoolingLayer gp = new GlobalPoolingLayer.Builder().build();
        InputType img = InputType.convolutional(6, 6, 2);
        InputType seq = InputType.recurrent(2, 8);
        Map<String, JsonNode> m = new LinkedHashMap<>();
        m.put("DenseLayer", layerJson(network(null, new DenseLayer.Builder().nIn(3).nOut(2).build(), loss), 0));
        m.put("OutputLayer", layerJson(network(null, new OutputLayer.Builder().nIn(3).nOut(2).build()), 0));
        m.put("LossLayer", layerJson(network(null, new DenseLayer.Builder().nIn(3).nOut(2).build(), loss), 1));
        m.put("ActivationLayer", layerJson(network(null, new DenseLayer.Builder().nIn(3).nOut(2).build(),
                new ActivationLayer(Activation.RELU), loss), 1));
        m.put("DropoutLayer", layerJson(network(null, new DenseLayer.Builder().nIn(3).nOut(2).build(),
                new DropoutLayer.Builder(0.5).build(), loss), 1));
        m.put("BatchNormalization", layerJson(network(img, new BatchNormalization.Builder().build(), gp, loss), 0));
        m.put("ConvolutionLayer", layerJson(network(img, new ConvolutionLayer.Builder(3, 3).nOut(2).build(), gp,
                loss), 0));
        m.put("Convolution1DLayer", layerJson(network(seq, new Convolution1DLayer.Builder(3).nOut(2).build(), gp,
                loss), 0));
        m.put("SubsamplingLayer", layerJson(network(img, new SubsamplingLayer.Builder().build(), gp, loss), 0));
        m.put("Subsampling1DLayer", layerJson(network(seq, new Subsampling1DLayer.Builder().build(), gp, loss), 0));
        m.put("Upsampling2D", layerJson(network(img, new Upsampling2D.Builder(2).build(), gp, loss), 0));
        m.put("ZeroPaddingLayer", layerJson(network(img, new ZeroPaddingLayer.Builder(1, 1).build(), gp, loss), 0));
        m.put("GlobalPoolingLayer", layerJson(network(img, gp, loss), 0));
        m.put("EmbeddingLayer", layerJson(network(null, new EmbeddingLayer.Builder().nIn(10).nOut(3).build(), loss),
                0));
        m.put("FrozenLayer", layerJson(network(null, new FrozenLayer(new DenseLayer.Builder().nIn(3).nOut(2).build()),
                loss), 0));
        return m;
    }

    @Test
    void everyLayerTypeHasExactlyTheContractFields() throws Exception {
        Map<String, Set<String>> expected = new LinkedHashMap<>();
        expected.put("DenseLayer", fields(BASE, "nIn", "nOut", "hasBias"));
        expected.put("OutputLayer", fields(BASE, "nIn", "nOut", "hasBias", "lossFunction", "lossWeights"));
        expected.put("LossLayer", fields(List.of(), "activation", "lossFunction", "lossWeights"));
        expected.put("ActivationLayer", fields(List.of(), "activation"));
        expected.put("DropoutLayer", fields(List.of()));
        expected.put("BatchNormalization", fields(BASE, "nIn", "nOut", "decay", "eps", "lockGammaBeta", "gamma",
                "beta"));
        expected.put("ConvolutionLayer", fields(BASE, "nIn", "nOut", "kernelSize", "stride", "padding", "dilation",
                "convolutionMode", "hasBias"));
        expected.put("Convolution1DLayer", fields(BASE, "nIn", "nOut", "kernelSize", "stride", "padding",
                "dilation", "convolutionMode", "hasBias"));
        expected.put("SubsamplingLayer", fields(List.of(), "poolingType", "kernelSize", "stride", "padding",
                "dilation", "convolutionMode", "pnorm", "eps"));
        expected.put("Subsampling1DLayer", fields(List.of(), "poolingType", "kernelSize", "stride", "padding",
                "dilation", "convolutionMode", "pnorm", "eps"));
        expected.put("Upsampling2D", fields(List.of(), "size"));
        expected.put("ZeroPaddingLayer", fields(List.of(), "padding"));
        expected.put("GlobalPoolingLayer", fields(List.of(), "poolingType", "pnorm", "collapseDimensions"));
        expected.put("EmbeddingLayer", fields(BASE, "nIn", "nOut", "hasBias"));
        expected.put("FrozenLayer", fields(List.of(), "layer"));

        Map<String, JsonNode> actual = oneOfEach();
        assertEquals(expected.keySet(), actual.keySet());
        for (Map.Entry<String, JsonNode> e : actual.entrySet()) {
            assertEquals(e.getKey(), e.getValue().get("type").asText());
            assertEquals(expected.get(e.getKey()), fieldNames(e.getValue()), e.getKey());
            // "type" comes first: serde and Jackson both read the tag from anywhere, humans read it first
            assertEquals("type", e.getValue().fieldNames().next(), e.getKey());
        }
        // 1D layers write plain numbers, 2D layers [h, w] arrays; the frozen layer nests the wrapped one
        assertTrue(actual.get("Convolution1DLayer").get("kernelSize").isInt());
        assertTrue(actual.get("Subsampling1DLayer").get("stride").isInt());
        assertEquals("[3,3]", actual.get("ConvolutionLayer").get("kernelSize").toString());
        assertEquals("[1,1,1,1]", actual.get("ZeroPaddingLayer").get("padding").toString());
        assertEquals("[2,2]", actual.get("Upsampling2D").get("size").toString());
        assertEquals("DenseLayer", actual.get("FrozenLayer").get("layer").get("type").asText());
        assertEquals(fields(BASE, "nIn", "nOut", "hasBias"), fieldNames(actual.get("FrozenLayer").get("layer")));
    }

    @Test
    void enumsAreWrittenWithTheReferenceNames() throws Exception {
        Map<String, JsonNode> m = oneOfEach();
        assertEquals("SIGMOID", m.get("DenseLayer").get("activation").asText());
        assertEquals("XAVIER", m.get("DenseLayer").get("weightInit").asText());
        assertEquals("None", m.get("DenseLayer").get("gradientNormalization").asText());
        assertEquals("Truncate", m.get("ConvolutionLayer").get("convolutionMode").asText());
        assertEquals("MAX", m.get("SubsamplingLayer").get("poolingType").asText());
        assertEquals("MCXENT", m.get("OutputLayer").get("lossFunction").asText());
        assertTrue(m.get("OutputLayer").get("lossWeights").isNull());
        assertTrue(m.get("DenseLayer").get("weightInitDistribution").isNull());
        assertTrue(m.get("DenseLayer").get("name").isNull());
    }

    @Test
    void inputTypesAndDistributionsHaveTheContractShape() throws Exception {
        ObjectMapper om = new ObjectMapper();
        String[][] cases = {
            {"{\"type\":\"feedForward\",\"size\":784}", null},
            {"{\"type\":\"convolutional\",\"height\":28,\"width\":28,\"channels\":1}", null},
            {"{\"type\":\"convolutionalFlat\",\"height\":28,\"width\":28,\"depth\":1}", null},
            {"{\"type\":\"recurrent\",\"size\":8,\"timeSeriesLength\":20}", null},
        };
        InputType[] types = {InputType.feedForward(784), InputType.convolutional(28, 28, 1),
            InputType.convolutionalFlat(28, 28, 1), InputType.recurrent(8, 20)};
        for (int i = 0; i < types.length; i++) {
            String json = org.ferrodl.nn.conf.serde.JsonMappers.getMapper().writeValueAsString(types[i]);
            assertEquals(om.readTree(cases[i][0]), om.readTree(json));
            assertEquals(types[i], org.ferrodl.nn.conf.serde.JsonMappers.getMapper().readValue(json, InputType.class));
        }
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(1)
                .weightInit(new org.ferrodl.nn.conf.distribution.UniformDistribution(-0.5, 0.5)).list()
                .layer(new DenseLayer.Builder().nIn(2).nOut(2)
                        .weightInit(new org.ferrodl.nn.conf.distribution.TruncatedNormalDistribution(0, 0.1)).build())
                .layer(new OutputLayer.Builder().nOut(2).build()).build();
        JsonNode layers = om.readTree(c.toJson()).get("layers");
        assertEquals(om.readTree("{\"type\":\"truncatedNormal\",\"mean\":0.0,\"std\":0.1}"),
                layers.get(0).get("weightInitDistribution"));
        assertEquals(om.readTree("{\"type\":\"uniform\",\"lower\":-0.5,\"upper\":0.5}"),
                layers.get(1).get("weightInitDistribution"));
        assertEquals("DISTRIBUTION", layers.get(1).get("weightInit").asText());
        MultiLayerConfiguration n = new NeuralNetConfiguration.Builder().seed(1)
                .weightInit(new org.ferrodl.nn.conf.distribution.NormalDistribution(1, 2)).list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build();
        assertEquals(om.readTree("{\"type\":\"normal\",\"mean\":1.0,\"std\":2.0}"),
                om.readTree(n.toJson()).get("layers").get(0).get("weightInitDistribution"));
        // no inputType: the field is left out (optional in the contract)
        assertTrue(!om.readTree(n.toJson()).has("inputType"));
    }

    /** The reference's LeNet example, exactly as written there (with setInputType). */
    static MultiLayerConfiguration lenet() {
        return new NeuralNetConfiguration.Builder()
                .seed(123).l2(0.0005).weightInit(WeightInit.XAVIER).updater(new Nesterovs(0.01, 0.9))
                .list()
                .layer(new ConvolutionLayer.Builder(5, 5).nIn(1).stride(1, 1).nOut(20)
                        .activation(Activation.IDENTITY).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2)
                        .build())
                .layer(new ConvolutionLayer.Builder(5, 5).stride(1, 1).nOut(50).activation(Activation.IDENTITY)
                        .build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2)
                        .build())
                .layer(new DenseLayer.Builder().activation(Activation.RELU).nOut(500).build())
                .layer(new OutputLayer.Builder(LossFunction.NEGATIVELOGLIKELIHOOD).nOut(10)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(28, 28, 1))
                .build();
    }

    private static String base(String activation) {
        return "\"activation\": \"" + activation + "\", \"weightInit\": \"XAVIER\", \"weightInitDistribution\": null,"
                + " \"biasInit\": 0.0, \"l1\": 0.0, \"l2\": 5.0E-4, \"l1Bias\": 0.0, \"l2Bias\": 0.0,"
                + " \"weightDecay\": 0.0, \"weightDecayBias\": 0.0,"
                + " \"updater\": {\"type\": \"Nesterovs\", \"learningRate\": 0.01, \"momentum\": 0.9},"
                + " \"biasUpdater\": {\"type\": \"Nesterovs\", \"learningRate\": 0.01, \"momentum\": 0.9},"
                + " \"gradientNormalization\": \"None\", \"gradientNormalizationThreshold\": 1.0";
    }

    private static final String POOL = "{\"type\": \"SubsamplingLayer\", \"name\": null, \"dropOut\": 0.0,"
            + " \"poolingType\": \"MAX\", \"kernelSize\": [2, 2], \"stride\": [2, 2], \"padding\": [0, 0],"
            + " \"dilation\": [1, 1], \"convolutionMode\": \"Truncate\", \"pnorm\": 2, \"eps\": 1.0E-8}";

    @Test
    void lenetDocumentIsExactlyTheContract() throws Exception {
        String conv = "\"kernelSize\": [5, 5], \"stride\": [1, 1], \"padding\": [0, 0], \"dilation\": [1, 1],"
                + " \"convolutionMode\": \"Truncate\", \"hasBias\": true";
        String expected = "{\"formatVersion\": 1, \"seed\": 123, \"miniBatch\": true, \"iterationCount\": 0,"
                + " \"epochCount\": 0,"
                + " \"inputType\": {\"type\": \"convolutionalFlat\", \"height\": 28, \"width\": 28, \"depth\": 1},"
                + " \"layers\": ["
                + "{\"type\": \"ConvolutionLayer\", \"name\": null, \"dropOut\": 0.0, \"nIn\": 1, \"nOut\": 20, "
                + base("IDENTITY") + ", " + conv + "}, "
                + POOL + ", "
                + "{\"type\": \"ConvolutionLayer\", \"name\": null, \"dropOut\": 0.0, \"nIn\": 20, \"nOut\": 50, "
                + base("IDENTITY") + ", " + conv + "}, "
                + POOL + ", "
                + "{\"type\": \"DenseLayer\", \"name\": null, \"dropOut\": 0.0, \"nIn\": 800, \"nOut\": 500, "
                + base("RELU") + ", \"hasBias\": true}, "
                + "{\"type\": \"OutputLayer\", \"name\": null, \"dropOut\": 0.0, \"nIn\": 500, \"nOut\": 10, "
                + base("SOFTMAX") + ", \"hasBias\": true, \"lossFunction\": \"NEGATIVELOGLIKELIHOOD\","
                + " \"lossWeights\": null}"
                + "]}";
        ObjectMapper om = new ObjectMapper();
        String json = lenet().toJson();
        assertEquals(om.readTree(expected), om.readTree(json));
        assertEquals(lenet(), MultiLayerConfiguration.fromJson(expected));
        // humans read the top level in this order
        assertTrue(json.indexOf("\"epochCount\"") < json.indexOf("\"inputType\"")
                && json.indexOf("\"inputType\"") < json.indexOf("\"layers\""), json);
    }
}
