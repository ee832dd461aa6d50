package org.ferrodl.nn.conf;

import static org.ferrodl.nn.conf.ConfTestSupport.layerJson;
import static org.ferrodl.nn.conf.ConfTestSupport.roundTrips;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.RmsProp;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.graph.rnn.DuplicateToTimeSeriesVertex;
import org.ferrodl.nn.conf.graph.rnn.LastTimeStepVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.GravesLSTM;
import org.ferrodl.nn.conf.layers.LSTM;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.RnnLossLayer;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.conf.layers.recurrent.LastTimeStep;
import org.ferrodl.nn.conf.layers.recurrent.SimpleRnn;
import org.ferrodl.nn.conf.layers.EmbeddingSequenceLayer;
import org.ferrodl.nn.conf.layers.recurrent.Bidirectional;
import org.ferrodl.nn.conf.layers.recurrent.TimeDistributed;
import org.ferrodl.nn.conf.layers.util.MaskZeroLayer;
import org.ferrodl.nn.conf.preprocessor.CnnToRnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.FeedForwardToRnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.RnnToFeedForwardPreProcessor;
import org.ferrodl.nn.conf.serde.JsonMappers;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/**
 * Recurrent networks through the engine's resolution: the reference's character model (TBPTT),
 * every recurrent layer, wrapper, vertex and preprocessor in a network that builds, nIn inferred
 * from {@code InputType.recurrent}, global values resolved into wrapped layers, and the whole
 * configuration through JSON, YAML, Java serialization, Kryo and clone.
 */
class RecurrentNetworkConfigTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The reference's character model (004): 2 × GravesLSTM, RnnOutputLayer softmax/MCXENT, RmsProp, l2,
     * TBPTT 50, every nIn given and no setInputType (the first layer's nIn says the input is a sequence of
     * that size, of any length).
     */
    static MultiLayerConfiguration charModel(int vocab, int units) {
        return new NeuralNetConfiguration.Builder().seed(12345).l2(0.001).weightInit(org.ferrodl.nn.weights.WeightInit.XAVIER)
                .updater(new RmsProp(0.1)).list()
                .layer(new GravesLSTM.Builder().nIn(vocab).nOut(units).activation(Activation.TANH).build())
                .layer(new GravesLSTM.Builder().nIn(units).nOut(units).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(units)
                        .nOut(vocab).build())
                .backpropType(BackpropType.TruncatedBPTT).tBPTTForwardLength(50).tBPTTBackwardLength(50)
                .build();
    }

    @Test
    void characterModelRoundTripsWithItsTbpttSettings() throws Exception {
        MultiLayerConfiguration c = charModel(77, 200);
        assertEquals(BackpropType.TruncatedBPTT, c.getBackpropType());
        assertEquals(50, c.getTbpttFwdLength());
        assertEquals(50, c.getTbpttBackLength());
        JsonNode doc = JSON.readTree(c.toJson());
        assertEquals("TruncatedBPTT", doc.get("backpropType").asText());
        assertEquals(50, doc.get("tbpttFwdLength").asInt());
        assertEquals(50, doc.get("tbpttBackLength").asInt());
        assertEquals(List.of(InputType.recurrent(200), InputType.recurrent(200), InputType.recurrent(77)),
                c.getLayerActivationTypes(), "sequences of any length");
        for (Layer l : roundTrips(c, 1)) {
            GravesLSTM g = assertInstanceOf(GravesLSTM.class, l);
            assertEquals(new RmsProp(0.1), g.getIUpdater());
            assertEquals(0.001, g.getL2());
            assertEquals(Activation.TANH, g.getActivation());
        }
        MultiLayerConfiguration back = MultiLayerConfiguration.fromJson(c.toJson());
        assertEquals(BackpropType.TruncatedBPTT, back.getBackpropType());
        assertEquals(50, back.getTbpttBackLength());
    }

    @Test
    void recurrentLayersInferSizesAndTakeTheGlobals() throws Exception {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(3).updater(new Adam(0.01))
                .activation(Activation.TANH).dropOut(0.9).list()
                .layer(new LSTM.Builder().nOut(6).build())
                .layer(new SimpleRnn.Builder().nOut(5).build())
                .layer(new DenseLayer.Builder().nOut(4).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nOut(2).build())
                .setInputType(InputType.recurrent(7))
                .build();
        assertEquals(7L, ((LSTM) c.getLayers().get(0)).getNIn());
        assertEquals(6L, ((SimpleRnn) c.getLayers().get(1)).getNIn());
        assertEquals(5L, ((DenseLayer) c.getLayers().get(2)).getNIn(), "a dense layer applies per time step");
        assertEquals(4L, ((RnnOutputLayer) c.getLayers().get(3)).getNIn());
        LSTM lstm = (LSTM) c.getLayers().get(0);
        assertEquals(Activation.TANH, lstm.getActivation());
        assertEquals(new Adam(0.01), lstm.getIUpdater());
        assertEquals(0.9, lstm.getDropOut());
        assertEquals(Activation.SIGMOID, lstm.getGateActivationFn());
        assertEquals(List.of(InputType.recurrent(6), InputType.recurrent(5), InputType.recurrent(4),
                InputType.recurrent(2)), c.getLayerActivationTypes());
        for (Layer l : roundTrips(c, 1)) {
            assertEquals(c.getLayers().get(1), l);
        }
        MultiLayerConfiguration loss = new NeuralNetConfiguration.Builder().seed(4).list()
                .layer(new SimpleRnn.Builder().nOut(4).build())
                .layer(new RnnLossLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(3, 9))
                .build();
        assertInstanceOf(RnnLossLayer.class, roundTrips(loss, 1)[1]);
        assertEquals(List.of(InputType.recurrent(4, 9), InputType.recurrent(4, 9)), loss.getLayerActivationTypes());
    }

    @Test
    void graphWithTbptt() throws Exception {
        ComputationGraphConfiguration g = new NeuralNetConfiguration.Builder().seed(5).activation(Activation.TANH)
                .graphBuilder()
                .addInputs("a", "b")
                .setInputTypes(InputType.recurrent(3), InputType.recurrent(2))
                .addLayer("lstm", new LSTM.Builder().nOut(4).build(), "a", "b")
                .addLayer("perStep", new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY)
                        .nOut(2).build(), "lstm")
                .setOutputs("perStep")
                .backpropType(BackpropType.TruncatedBPTT).tBPTTLength(7)
                .build();
        assertEquals(5L, ((LSTM) g.getConf("lstm").getLayer()).getNIn(), "3 + 2 merged");
        String json = g.toJson();
        JsonNode doc = JSON.readTree(json);
        assertEquals("TruncatedBPTT", doc.get("backpropType").asText());
        assertEquals(7, doc.get("tbpttFwdLength").asInt());
        assertEquals(7, doc.get("tbpttBackLength").asInt());
        assertEquals(0, doc.get("inputTypes").get(0).get("timeSeriesLength").asInt(), "any length");
        for (ComputationGraphConfiguration copy : new ComputationGraphConfiguration[] {
            ComputationGraphConfiguration.fromJson(json), ComputationGraphConfiguration.fromYaml(g.toYaml()),
            SerializationUtil.javaRoundTrip(g), (ComputationGraphConfiguration) SerializationUtil.kryoRoundTrip(g),
            g.clone()}) {
            assertEquals(g, copy);
            assertEquals(json, copy.toJson());
            assertEquals(7, copy.getTbpttBackLength());
            assertNotSame(g.getVertices().get("lstm"), copy.getVertices().get("lstm"));
        }
    }

    @Test
    void aStandardNetworkWritesNoTbpttFields() throws Exception {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new LSTM.Builder().nIn(2).nOut(3).build())
                .layer(new RnnOutputLayer.Builder().nIn(3).nOut(2).activation(Activation.SOFTMAX).build()).build();
        JsonNode doc = JSON.readTree(c.toJson());
        assertFalse(doc.has("backpropType") || doc.has("tbpttFwdLength") || doc.has("inputPreProcessors"), doc.toString());
        assertEquals(c, MultiLayerConfiguration.fromJson(c.toJson()));
        assertEquals(c, MultiLayerConfiguration.fromJson(JsonMappers.getMapper().readTree(c.toJson()).toString()));
    }

    @Test
    void graphWithRecurrentVertices() throws Exception {
        ComputationGraphConfiguration g = new NeuralNetConfiguration.Builder().seed(5).activation(Activation.TANH)
                .graphBuilder()
                .addInputs("seq", "static")
                .setInputTypes(InputType.recurrent(3), InputType.feedForward(2))
                .addVertex("dup", new DuplicateToTimeSeriesVertex("seq"), "static")
                .addLayer("lstm", new LSTM.Builder().nOut(4).build(), "seq", "dup")
                .addVertex("last", new LastTimeStepVertex("seq"), "lstm")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nOut(1)
                        .build(), "last")
                .addLayer("perStep", new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY)
                        .nOut(2).build(), "lstm")
                .setOutputs("out", "perStep")
                .build();
        assertEquals(5L, ((LSTM) g.getConf("lstm").getLayer()).getNIn(), "3 + 2 (the duplicated vector) merged");
        assertEquals(InputType.feedForward(4), g.getLayerActivationTypes().get("last"));
        String json = g.toJson();
        for (ComputationGraphConfiguration copy : new ComputationGraphConfiguration[] {
            ComputationGraphConfiguration.fromJson(json), ComputationGraphConfiguration.fromYaml(g.toYaml()),
            SerializationUtil.javaRoundTrip(g), (ComputationGraphConfiguration) SerializationUtil.kryoRoundTrip(g),
            g.clone()}) {
            assertEquals(g, copy);
            assertEquals(json, copy.toJson());
            assertNotSame(g.getVertices().get("last"), copy.getVertices().get("last"));
        }
    }

    @Test
    void explicitPreprocessorsRoundTripAndMatchTheImplicitOnes() throws Exception {
        NeuralNetConfiguration.ListBuilder lb = new NeuralNetConfiguration.Builder().seed(4).activation(Activation.TANH)
                .list()
                .layer(new LSTM.Builder().nIn(3).nOut(5).build())
                .layer(new DenseLayer.Builder().nIn(5).nOut(4).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nIn(4).nOut(2)
                        .build());
        MultiLayerConfiguration implicit = lb.build();
        MultiLayerConfiguration explicit = lb.inputPreProcessor(1, new RnnToFeedForwardPreProcessor())
                .inputPreProcessor(2, new FeedForwardToRnnPreProcessor()).build();
        assertEquals(Map.of(1, new RnnToFeedForwardPreProcessor(), 2, new FeedForwardToRnnPreProcessor()),
                explicit.getInputPreProcessors());
        assertEquals(new RnnToFeedForwardPreProcessor(), explicit.getInputPreProcess(1));
        JsonNode pre = JSON.readTree(explicit.toJson()).get("inputPreProcessors");
        assertEquals("{\"1\":{\"type\":\"RnnToFeedForwardPreProcessor\",\"rnnDataFormat\":\"NCW\"},"
                + "\"2\":{\"type\":\"FeedForwardToRnnPreProcessor\",\"rnnDataFormat\":\"NCW\"}}", pre.toString());
        roundTrips(explicit, 1);
        assertEquals(implicit.getLayerActivationTypes(), explicit.getLayerActivationTypes());
        String cnn = ConfTestSupport.invalid(() -> new NeuralNetConfiguration.Builder().seed(4).list()
                .layer(new LSTM.Builder().nIn(12).nOut(5).build())
                .layer(new RnnOutputLayer.Builder().nIn(5).nOut(2).activation(Activation.SOFTMAX).build())
                .inputPreProcessor(0, new CnnToRnnPreProcessor(2, 2, 3)).build());
        assertTrue(cnn.contains("CnnToRnnPreProcessor"), cnn);
    }

    @Test
    void everyRecurrentLayerBuildsAndInfersSizes() throws Exception {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(3).updater(new Adam(0.01))
                .activation(Activation.TANH).dropOut(0.9).list()
                .layer(new LSTM.Builder().nOut(6).build())
                .layer(new Bidirectional(Bidirectional.Mode.CONCAT, new SimpleRnn.Builder().nOut(5).build()))
                .layer(new MaskZeroLayer(new GravesLSTM.Builder().nOut(4).build(), -1.0))
                .layer(new TimeDistributed(new DenseLayer.Builder().nOut(3).build()))
                .layer(new LastTimeStep(new LSTM.Builder().nOut(4).build()))
                .layer(new DenseLayer.Builder().nOut(3).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nOut(2).build())
                .setInputType(InputType.recurrent(7))
                .build();
        assertEquals(7L, ((LSTM) c.getLayers().get(0)).getNIn());
        Bidirectional bi = (Bidirectional) c.getLayers().get(1);
        assertEquals(6L, bi.getNIn());
        assertEquals(5L, bi.getNOut(), "the wrapped nOut, as the reference; CONCAT gives the next layer 10");
        assertEquals(10L, ((GravesLSTM) ((MaskZeroLayer) c.getLayers().get(2)).getUnderlying()).getNIn());
        assertEquals(4L, ((DenseLayer) ((TimeDistributed) c.getLayers().get(3)).getUnderlying()).getNIn());
        assertEquals(3L, ((LSTM) ((LastTimeStep) c.getLayers().get(4)).getUnderlying()).getNIn());
        assertEquals(4L, ((DenseLayer) c.getLayers().get(5)).getNIn());
        // globals reach the wrapped layer; the wrapper's own dropout stays 0
        SimpleRnn fwd = (SimpleRnn) bi.getFwd();
        assertEquals(new Adam(0.01), fwd.getIUpdater());
        assertEquals(Activation.TANH, fwd.getActivation());
        assertEquals(0.9, fwd.getDropOut());
        assertEquals(0.0, bi.getDropOut());
        JsonNode biJson = layerJson(c, 1);
        assertEquals(10, biJson.path("fwd").path("nOut").asInt() * 2);
        for (Layer l : roundTrips(c, 1)) {
            assertEquals(bi, l);
        }
        assertEquals(List.of(InputType.recurrent(6), InputType.recurrent(10), InputType.recurrent(4),
                InputType.recurrent(3), InputType.feedForward(4), InputType.feedForward(3), InputType.feedForward(2)),
                c.getLayerActivationTypes());
    }

    @Test
    void embeddingSequenceAndRnnLossLayerWithAnExplicitPreprocessor() throws Exception {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(4).list()
                .layer(new EmbeddingSequenceLayer.Builder().nIn(50).nOut(8).build())
                .layer(new LSTM.Builder().nOut(5).activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nOut(4).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nOut(4).build())
                .inputPreProcessor(2, new RnnToFeedForwardPreProcessor())
                .build();
        assertEquals(8L, ((LSTM) c.getLayers().get(1)).getNIn());
        assertEquals(Map.of(2, new RnnToFeedForwardPreProcessor()), c.getInputPreProcessors());
        JsonNode pre = JSON.readTree(c.toJson()).get("inputPreProcessors");
        assertEquals("{\"2\":{\"type\":\"RnnToFeedForwardPreProcessor\",\"rnnDataFormat\":\"NCW\"}}", pre.toString());
        roundTrips(c, 3);
        MultiLayerConfiguration loss = new NeuralNetConfiguration.Builder().seed(4).list()
                .layer(new SimpleRnn.Builder().nIn(3).nOut(4).build())
                .layer(new RnnLossLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).build())
                .build();
        assertInstanceOf(RnnLossLayer.class, roundTrips(loss, 1)[1]);
    }
}
