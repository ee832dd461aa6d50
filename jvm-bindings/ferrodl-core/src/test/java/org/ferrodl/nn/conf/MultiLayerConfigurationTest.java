package org.ferrodl.nn.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

class MultiLayerConfigurationTest {

    /**
     * The example of docs/ARCHITECTURE.md §2 with the fields of §2.2 that it leaves out (dropOut,
     * weightInitDistribution, weightDecay, weightDecayBias, gradientNormalization,
     * gradientNormalizationThreshold, lossWeights) at their defaults: Java writes every field.
     */
    private static final String ARCHITECTURE_EXAMPLE = "{\n"
            + "  \"formatVersion\": 1, \"seed\": 12345, \"miniBatch\": true, \"iterationCount\": 0, \"epochCount\": 0,\n"
            + "  \"layers\": [\n"
            + "    { \"type\": \"DenseLayer\", \"name\": null, \"dropOut\": 0.0, \"nIn\": 784, \"nOut\": 100,\n"
            + "      \"activation\": \"RELU\", \"weightInit\": \"XAVIER\", \"weightInitDistribution\": null,\n"
            + "      \"biasInit\": 0.0, \"hasBias\": true,\n"
            + "      \"l1\": 0.0, \"l2\": 1e-4, \"l1Bias\": 0.0, \"l2Bias\": 0.0, \"weightDecay\": 0.0, \"weightDecayBias\": 0.0,\n"
            + "      \"updater\": {\"type\": \"Adam\", \"learningRate\": 0.001, \"beta1\": 0.9, \"beta2\": 0.999, \"epsilon\": 1e-8},\n"
            + "      \"biasUpdater\": {\"type\": \"Adam\", \"learningRate\": 0.001, \"beta1\": 0.9, \"beta2\": 0.999, \"epsilon\": 1e-8},\n"
            + "      \"gradientNormalization\": \"None\", \"gradientNormalizationThreshold\": 1.0 },\n"
            + "    { \"type\": \"OutputLayer\", \"name\": null, \"dropOut\": 0.0, \"nIn\": 100, \"nOut\": 10,\n"
            + "      \"activation\": \"SOFTMAX\", \"weightInit\": \"XAVIER\", \"weightInitDistribution\": null,\n"
            + "      \"biasInit\": 0.0, \"hasBias\": true,\n"
            + "      \"l1\": 0.0, \"l2\": 1e-4, \"l1Bias\": 0.0, \"l2Bias\": 0.0, \"weightDecay\": 0.0, \"weightDecayBias\": 0.0,\n"
            + "      \"updater\": {\"type\": \"Sgd\", \"learningRate\": 0.1},\n"
            + "      \"biasUpdater\": {\"type\": \"Sgd\", \"learningRate\": 0.1},\n"
            + "      \"gradientNormalization\": \"None\", \"gradientNormalizationThreshold\": 1.0,\n"
            + "      \"lossFunction\": \"MCXENT\", \"lossWeights\": null }\n"
            + "  ]\n"
            + "}";

    static MultiLayerConfiguration architectureExample() {
        return new NeuralNetConfiguration.Builder()
                .seed(12345)
                .updater(new Adam(1e-3))
                .weightInit(WeightInit.XAVIER)
                .l2(1e-4)
                .list()
                .layer(new DenseLayer.Builder().nIn(784).nOut(100).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(100).nOut(10)
                        .activation(Activation.SOFTMAX).updater(new Sgd(0.1)).build())
                .build();
    }

    /** Every option set, with layer values overriding globals. */
    static MultiLayerConfiguration everyOption() {
        return new NeuralNetConfiguration.Builder()
                .seed(-987654321L)
                .updater(new Adam(0.002, 0.8, 0.99, 1e-6))
                .biasUpdater(new Sgd(0.05))
                .weightInit(WeightInit.RELU)
                .activation(Activation.TANH)
                .biasInit(0.25)
                .l1(1e-5).l2(2e-4).l1Bias(3e-5).l2Bias(4e-4)
                .miniBatch(false)
                .list()
                .layer(new DenseLayer.Builder().name("hidden").nIn(4).nOut(8).activation(Activation.LEAKYRELU)
                        .weightInit(WeightInit.XAVIER).updater(new Nesterovs(0.05, 0.95)).biasUpdater(new Sgd(0.3))
                        .l1(0.1).l2(0.2).l1Bias(0.3).l2Bias(0.4).biasInit(-0.5).hasBias(false).build())
                .layer(new DenseLayer.Builder().nIn(8).nOut(6).build())
                .layer(2, new OutputLayer.Builder().lossFunction(LossFunction.MSE).name("out").nIn(6).nOut(3)
                        .activation(Activation.IDENTITY).build())
                .build();
    }

    @Test
    void toJsonProducesExactlyTheArchitectureDocument() throws Exception {
        ObjectMapper m = new ObjectMapper();
        JsonNode expected = m.readTree(ARCHITECTURE_EXAMPLE);
        JsonNode actual = m.readTree(architectureExample().toJson());
        assertEquals(expected, actual);
        // field order as documented (serde does not care, humans do)
        String json = architectureExample().toJson();
        assertTrue(json.indexOf("\"formatVersion\"") < json.indexOf("\"seed\""));
        assertTrue(json.indexOf("\"type\" : \"DenseLayer\"") < json.indexOf("\"name\""));
    }

    @Test
    void globalsResolveIntoLayersAndLayerValuesWin() {
        MultiLayerConfiguration c = everyOption();
        DenseLayer hidden = (DenseLayer) c.getLayers().get(0);
        assertEquals("hidden", hidden.getLayerName());
        assertEquals(Activation.LEAKYRELU, hidden.getActivation());
        assertEquals(WeightInit.XAVIER, hidden.getWeightInit());
        assertEquals(new Nesterovs(0.05, 0.95), hidden.getIUpdater());
        assertEquals(new Sgd(0.3), hidden.getBiasUpdater());
        assertEquals(0.1, hidden.getL1());
        assertEquals(0.4, hidden.getL2Bias());
        assertEquals(-0.5, hidden.getBiasInit());
        assertFalse(hidden.getHasBias());

        DenseLayer second = (DenseLayer) c.getLayers().get(1);
        assertNull(second.getLayerName());
        assertEquals(Activation.TANH, second.getActivation());
        assertEquals(WeightInit.RELU, second.getWeightInit());
        assertEquals(new Adam(0.002, 0.8, 0.99, 1e-6), second.getIUpdater());
        assertEquals(new Sgd(0.05), second.getBiasUpdater());
        assertEquals(1e-5, second.getL1());
        assertEquals(2e-4, second.getL2());
        assertEquals(3e-5, second.getL1Bias());
        assertEquals(4e-4, second.getL2Bias());
        assertEquals(0.25, second.getBiasInit());
        assertTrue(second.getHasBias());

        OutputLayer out = (OutputLayer) c.getLayers().get(2);
        assertEquals(LossFunction.MSE, out.getLossFunction());
        assertEquals(Activation.IDENTITY, out.getActivation());
        assertEquals(-987654321L, c.getSeed());
        assertFalse(c.isMiniBatch());
        assertEquals(3, c.getLayers().size());
        assertEquals(out, c.getConf(2).getLayer());
        assertEquals(-987654321L, c.getConf(2).getSeed());
    }

    @Test
    void defaultsFollowTheReference() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nIn(3).nOut(2).build())
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build())
                .build();
        DenseLayer d = (DenseLayer) c.getLayers().get(0);
        assertEquals(Activation.SIGMOID, d.getActivation());
        assertEquals(WeightInit.XAVIER, d.getWeightInit());
        assertEquals(new Sgd(1e-3), d.getIUpdater());
        assertEquals(new Sgd(1e-3), d.getBiasUpdater());
        assertEquals(0.0, d.getL1());
        assertEquals(0.0, d.getL2());
        assertEquals(0.0, d.getBiasInit());
        assertTrue(d.getHasBias());
        assertTrue(c.isMiniBatch());
        assertEquals(LossFunction.MCXENT, ((OutputLayer) c.getLayers().get(1)).getLossFunction());
        assertEquals(new Adam(1e-3, 0.9, 0.999, 1e-8), new Adam());
        assertEquals(new Nesterovs(0.1, 0.9), new Nesterovs());
        assertEquals(0.1, new Nesterovs().getLearningRate());
        // an unset seed is random
        MultiLayerConfiguration c2 = new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build();
        MultiLayerConfiguration c3 = new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build();
        assertNotEquals(c2.getSeed(), c3.getSeed());
    }

    @Test
    void layerWithOnlyAnUpdaterUsesItForBiasesToo() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().updater(new Sgd(0.5)).list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).updater(new Adam(0.01)).build()).build();
        assertEquals(new Adam(0.01), ((OutputLayer) c.getLayers().get(0)).getBiasUpdater());
    }

    @Test
    void jsonAndYamlRoundTripWithEveryOption() throws Exception {
        MultiLayerConfiguration c = everyOption();
        c.setIterationCount(17);
        c.setEpochCount(3);
        String json = c.toJson();
        MultiLayerConfiguration fromJson = MultiLayerConfiguration.fromJson(json);
        assertEquals(c, fromJson);
        assertEquals(c.hashCode(), fromJson.hashCode());
        assertEquals(json, fromJson.toJson());
        assertEquals(17, fromJson.getIterationCount());
        assertEquals(3, fromJson.getEpochCount());

        String yaml = c.toYaml();
        assertFalse(yaml.contains("!<"), "the type must be a plain property, not a YAML tag:\n" + yaml);
        assertTrue(yaml.contains("type: \"Nesterovs\"") || yaml.contains("type: Nesterovs"), yaml);
        MultiLayerConfiguration fromYaml = MultiLayerConfiguration.fromYaml(yaml);
        assertEquals(c, fromYaml);
        assertEquals(json, fromYaml.toJson());

        assertEquals(c, SerializationUtil.javaRoundTrip(c));
        assertEquals(c, c.clone());
        assertNotEquals(c, architectureExample());
    }

    @Test
    void builderIsNotMutatedByBuild() {
        DenseLayer layer = new DenseLayer.Builder().nIn(2).nOut(2).build();
        new NeuralNetConfiguration.Builder().activation(Activation.RELU).list().layer(layer)
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build();
        assertNull(layer.getActivation(), "build() must resolve into copies of the layers");
    }

    private static DL4JInvalidConfigException invalid(Runnable r) {
        return assertThrows(DL4JInvalidConfigException.class, r::run);
    }

    @Test
    void noLayersIsRejected() {
        DL4JInvalidConfigException e = invalid(() -> new NeuralNetConfiguration.Builder().list().build());
        assertTrue(e.getMessage().contains("no layers"), e.getMessage());
    }

    @Test
    void missingNInIsInferredFromThePreviousLayerOrRejected() {
        // as in the reference, the input type follows from the first layer's nIn and later nIn are inferred
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nIn(4).nOut(3).build())
                .layer(new OutputLayer.Builder().nOut(2).build()).build();
        assertEquals(3L, ((OutputLayer) c.getLayers().get(1)).getNIn());
        assertNull(c.getInputType());
        DL4JInvalidConfigException e = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .layer(new OutputLayer.Builder().nOut(2).build()).build());
        assertTrue(e.getMessage().contains("layer 0 (DenseLayer)"), e.getMessage());
        assertTrue(e.getMessage().contains("nIn is not set"), e.getMessage());
        DL4JInvalidConfigException json = invalid(() -> MultiLayerConfiguration.fromJson(
                c.toJson().replace("\"nIn\" : 3,", "")));
        assertTrue(json.getMessage().contains("layer 1 (OutputLayer)") && json.getMessage().contains("nIn is not set"),
                json.getMessage());
    }

    @Test
    void missingOrZeroNOutIsRejected() {
        DL4JInvalidConfigException e = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().name("first").nIn(4).build())
                .layer(new OutputLayer.Builder().nIn(3).nOut(2).build()).build());
        assertTrue(e.getMessage().contains("layer 0 (DenseLayer \"first\")"), e.getMessage());
        assertTrue(e.getMessage().contains("nOut is not set"), e.getMessage());
        DL4JInvalidConfigException zero = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder().nIn(3).nOut(0).build()).build());
        assertTrue(zero.getMessage().contains("nOut is 0"), zero.getMessage());
    }

    @Test
    void mismatchedConsecutiveLayersAreRejected() {
        DL4JInvalidConfigException e = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nIn(4).nOut(100).build())
                .layer(new OutputLayer.Builder().nIn(50).nOut(2).build()).build());
        assertTrue(e.getMessage().contains("layer 1"), e.getMessage());
        assertTrue(e.getMessage().contains("nIn=50 does not match nOut=100 of layer 0"), e.getMessage());
    }

    @Test
    void softmaxWithOneOutputIsRejected() {
        DL4JInvalidConfigException e = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder().nIn(4).nOut(1).activation(Activation.SOFTMAX).build()).build());
        assertTrue(e.getMessage().contains("layer 0"), e.getMessage());
        assertTrue(e.getMessage().contains("SOFTMAX with nOut=1"), e.getMessage());
    }

    @Test
    void otherInvalidSettingsAreRejected() {
        DL4JInvalidConfigException l2 = invalid(() -> new NeuralNetConfiguration.Builder().l2(-1).list()
                .layer(new OutputLayer.Builder().nIn(4).nOut(2).build()).build());
        assertTrue(l2.getMessage().contains("l2 must be finite and >= 0, got -1.0"), l2.getMessage());
        DL4JInvalidConfigException lr = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder().nIn(4).nOut(2).updater(new Adam(Double.NaN)).build()).build());
        assertTrue(lr.getMessage().contains("updater Adam: learningRate"), lr.getMessage());
        DL4JInvalidConfigException outFirst = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder().nIn(4).nOut(2).build())
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build());
        assertTrue(outFirst.getMessage().contains("layer 0") && outFirst.getMessage().contains("last layer"),
                outFirst.getMessage());
        DL4JInvalidConfigException denseLast = invalid(() -> new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nIn(4).nOut(2).build()).build());
        assertTrue(denseLast.getMessage().contains("layer 0 (DenseLayer)")
                && denseLast.getMessage().contains("last layer must be an OutputLayer"), denseLast.getMessage());
        invalid(() -> new NeuralNetConfiguration.Builder().list().layer(3, new DenseLayer.Builder().build()));
    }

    @Test
    void malformedOrForeignJsonIsRejected() {
        String json = architectureExample().toJson();
        DL4JInvalidConfigException unknown = invalid(() -> MultiLayerConfiguration.fromJson(
                json.replace("\"miniBatch\"", "\"surprise\" : 1, \"miniBatch\"")));
        assertTrue(unknown.getMessage().contains("surprise"), unknown.getMessage());
        DL4JInvalidConfigException version = invalid(() -> MultiLayerConfiguration.fromJson(
                json.replace("\"formatVersion\" : 1", "\"formatVersion\" : 2")));
        assertTrue(version.getMessage().contains("formatVersion 2"), version.getMessage());
        DL4JInvalidConfigException missing = invalid(() -> MultiLayerConfiguration.fromJson(
                json.replace("\"activation\" : \"RELU\",", "")));
        assertTrue(missing.getMessage().contains("layer 0") && missing.getMessage().contains("activation is missing"),
                missing.getMessage());
        invalid(() -> MultiLayerConfiguration.fromJson("{ not json"));
        DL4JInvalidConfigException type = invalid(() -> MultiLayerConfiguration.fromJson(
                json.replace("\"DenseLayer\"", "\"LSTM\"")));
        assertTrue(type.getMessage().contains("LSTM"), type.getMessage());
    }

    @Test
    void updaterJsonCarriesTypeAndHyperParameters() throws Exception {
        JsonNode n = new ObjectMapper().readTree(everyOption().toJson()).get("layers").get(0).get("updater");
        assertEquals("Nesterovs", n.get("type").asText());
        assertEquals(0.05, n.get("learningRate").asDouble());
        assertEquals(0.95, n.get("momentum").asDouble());
        assertEquals(3, n.size());
        assertInstanceOf(Nesterovs.class, everyOption().getLayers().get(0).clone() instanceof DenseLayer
                ? ((DenseLayer) everyOption().getLayers().get(0)).getIUpdater() : null);
    }
}
