package org.ferrodl.nn.conf.layers;

import static org.ferrodl.nn.conf.ConfTestSupport.allBaseOptions;
import static org.ferrodl.nn.conf.ConfTestSupport.checkAllBaseOptions;
import static org.ferrodl.nn.conf.ConfTestSupport.fieldNames;
import static org.ferrodl.nn.conf.ConfTestSupport.invalid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Set;
import java.util.TreeSet;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.InputPreProcessor;
import org.ferrodl.nn.conf.RNNFormat;
import org.ferrodl.nn.conf.distribution.UniformDistribution;
import org.ferrodl.nn.conf.graph.GraphVertex;
import org.ferrodl.nn.conf.graph.rnn.DuplicateToTimeSeriesVertex;
import org.ferrodl.nn.conf.graph.rnn.LastTimeStepVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.recurrent.Bidirectional;
import org.ferrodl.nn.conf.layers.recurrent.LastTimeStep;
import org.ferrodl.nn.conf.layers.recurrent.SimpleRnn;
import org.ferrodl.nn.conf.layers.recurrent.TimeDistributed;
import org.ferrodl.nn.conf.layers.util.MaskZeroLayer;
import org.ferrodl.nn.conf.preprocessor.CnnToRnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.FeedForwardToRnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.RnnToCnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.RnnToFeedForwardPreProcessor;
import org.ferrodl.nn.conf.serde.JsonMappers;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/**
 * The recurrent configuration classes on their own (no engine): the reference's builder defaults,
 * the exact JSON field set of RNN_CONTRACT.md for each layer, vertex and preprocessor, JSON/YAML/Java
 * serialization/Kryo/clone round trips with every option set, and the settings Java refuses
 * (wrapping a layer of the wrong kind, an unknown RNNFormat).
 */
class RecurrentLayerConfigTest {
    private static final ObjectMapper JSON = JsonMappers.getMapper();
    private static final ObjectMapper YAML = JsonMappers.getMapperYaml();
    private static final Set<String> BASE = Set.of("type", "name", "dropOut", "activation", "weightInit",
            "weightInitDistribution", "biasInit", "l1", "l2", "l1Bias", "l2Bias", "weightDecay", "weightDecayBias",
            "updater", "biasUpdater", "gradientNormalization", "gradientNormalizationThreshold");

    private static Set<String> base(String... own) {
        Set<String> s = new TreeSet<>(BASE);
        s.addAll(Set.of(own));
        return s;
    }

    /** JSON, YAML, Java serialization, Kryo and clone copies of a layer, each checked equal and stable. */
    private static Layer[] copies(Layer l) throws Exception {
        String json = JSON.writerFor(Layer.class).writeValueAsString(l);
        Layer fromJson = JSON.readValue(json, Layer.class);
        Layer fromYaml = YAML.readValue(YAML.writerFor(Layer.class).writeValueAsString(l), Layer.class);
        Layer[] out = {fromJson, fromYaml, SerializationUtil.javaRoundTrip(l), (Layer) SerializationUtil.kryoRoundTrip(l),
            l.clone()};
        for (Layer c : out) {
            assertEquals(l, c);
            assertEquals(l.hashCode(), c.hashCode());
            assertNotSame(l, c);
            assertEquals(json, JSON.writerFor(Layer.class).writeValueAsString(c));
        }
        assertFalse(YAML.writerFor(Layer.class).writeValueAsString(l).contains("!<"));
        return out;
    }

    private static JsonNode json(Object o, Class<?> as) throws Exception {
        return JSON.readTree(JSON.writerFor(as).writeValueAsString(o));
    }

    @Test
    void lstmDefaultsAndFields() throws Exception {
        LSTM l = new LSTM.Builder().nIn(3).nOut(5).build();
        assertEquals(1.0, l.getForgetGateBiasInit());
        assertEquals(Activation.SIGMOID, l.getGateActivationFn());
        assertNull(l.getActivation(), "no own activation default: the global value applies, as in the reference");
        assertNull(l.getWeightInitRecurrent());
        assertNull(l.getWeightInitRecurrentDistribution());
        assertEquals(RNNFormat.NCW, l.getRnnDataFormat());
        JsonNode n = json(l, Layer.class);
        assertEquals("LSTM", n.get("type").asText());
        assertEquals(base("nIn", "nOut", "gateActivationFn", "forgetGateBiasInit", "weightInitRecurrent",
                "weightInitRecurrentDistribution", "rnnDataFormat"), fieldNames(n));
        assertEquals("SIGMOID", n.get("gateActivationFn").asText());
        assertEquals("NCW", n.get("rnnDataFormat").asText());
        assertEquals("GravesLSTM", json(new GravesLSTM.Builder().nOut(2).build(), Layer.class).get("type").asText());
        assertEquals(fieldNames(n), fieldNames(json(new GravesLSTM.Builder().nOut(2).build(), Layer.class)));
    }

    @Test
    void lstmEveryOptionRoundTrips() throws Exception {
        Layer lstmFull = allBaseOptions(new LSTM.Builder()).nIn(4).nOut(6).forgetGateBiasInit(2.5)
                .gateActivationFunction("hardsigmoid").weightInitRecurrent(new UniformDistribution(-0.3, 0.3))
                .dataFormat(RNNFormat.NWC).build();
        Layer gravesFull = allBaseOptions(new GravesLSTM.Builder()).nIn(4).nOut(6).forgetGateBiasInit(2.5)
                .gateActivationFunction(Activation.HARDSIGMOID).weightInitRecurrent(new UniformDistribution(-0.3, 0.3))
                .dataFormat(RNNFormat.NWC).build();
        for (Layer layer : new Layer[] {lstmFull, gravesFull}) {
            for (Layer c : copies(layer)) {
                AbstractLSTM l = assertInstanceOf(AbstractLSTM.class, c);
                assertEquals(layer.getClass(), l.getClass());
                checkAllBaseOptions(l);
                assertEquals(4L, l.getNIn());
                assertEquals(6L, l.getNOut());
                assertEquals(2.5, l.getForgetGateBiasInit());
                assertEquals(Activation.HARDSIGMOID, l.getGateActivationFn());
                assertEquals(WeightInit.DISTRIBUTION, l.getWeightInitRecurrent());
                assertEquals(new UniformDistribution(-0.3, 0.3), l.getWeightInitRecurrentDistribution());
                assertEquals(RNNFormat.NWC, l.getRnnDataFormat());
            }
        }
        // a scheme other than DISTRIBUTION clears the recurrent distribution
        LSTM l = new LSTM.Builder().weightInitRecurrent(new UniformDistribution(0, 1))
                .weightInitRecurrent(WeightInit.XAVIER_UNIFORM).nOut(2).build();
        assertNull(l.getWeightInitRecurrentDistribution());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new LSTM.Builder().gateActivationFunction("sigmoidal"));
        assertTrue(e.getMessage().contains("sigmoidal") && e.getMessage().contains("HARDSIGMOID"), e.getMessage());
    }

    @Test
    void simpleRnn() throws Exception {
        SimpleRnn d = new SimpleRnn.Builder().nOut(3).build();
        assertFalse(d.hasLayerNorm());
        JsonNode n = json(d, Layer.class);
        assertEquals("SimpleRnn", n.get("type").asText());
        assertEquals(base("nIn", "nOut", "weightInitRecurrent", "weightInitRecurrentDistribution", "rnnDataFormat",
                "hasLayerNorm"), fieldNames(n));
        Layer layer = allBaseOptions(new SimpleRnn.Builder()).nIn(2).nOut(3).hasLayerNorm(true)
                .weightInitRecurrent(WeightInit.RELU).build();
        for (Layer c : copies(layer)) {
            SimpleRnn s = assertInstanceOf(SimpleRnn.class, c);
            checkAllBaseOptions(s);
            assertTrue(s.hasLayerNorm());
            assertEquals(WeightInit.RELU, s.getWeightInitRecurrent());
            assertEquals(3L, s.getNOut());
        }
    }

    @Test
    void rnnOutputAndLossLayers() throws Exception {
        RnnOutputLayer o = new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(4).build();
        assertEquals(RNNFormat.NCW, o.getRnnDataFormat());
        assertTrue(o.hasBias());
        assertEquals(base("nIn", "nOut", "hasBias", "lossFunction", "lossWeights", "rnnDataFormat"),
                fieldNames(json(o, Layer.class)));
        Layer full = allBaseOptions(new RnnOutputLayer.Builder(LossFunction.MSE)).nIn(3).nOut(2).hasBias(false)
                .dataFormat(RNNFormat.NWC).build();
        for (Layer c : copies(full)) {
            RnnOutputLayer r = assertInstanceOf(RnnOutputLayer.class, c);
            checkAllBaseOptions(r);
            assertEquals(LossFunction.MSE, r.getLossFunction());
            assertFalse(r.hasBias());
            assertEquals(RNNFormat.NWC, r.getRnnDataFormat());
        }
        RnnLossLayer loss = new RnnLossLayer.Builder().build();
        assertEquals(Activation.IDENTITY, loss.getActivation());
        assertEquals(LossFunction.MCXENT, loss.getLossFunction());
        JsonNode n = json(loss, Layer.class);
        assertEquals("RnnLossLayer", n.get("type").asText());
        assertEquals(Set.of("type", "name", "dropOut", "activation", "lossFunction", "lossWeights", "rnnDataFormat"),
                fieldNames(n));
        Layer fullLoss = new RnnLossLayer.Builder(LossFunction.XENT).activation(Activation.SIGMOID).name("l")
                .dropOut(0.5).dataFormat(RNNFormat.NWC).build();
        for (Layer c : copies(fullLoss)) {
            RnnLossLayer r = assertInstanceOf(RnnLossLayer.class, c);
            assertEquals("l", r.getLayerName());
            assertEquals(0.5, r.getDropOut());
            assertEquals(Activation.SIGMOID, r.getActivation());
            assertEquals(LossFunction.XENT, r.getLossFunction());
            assertEquals(RNNFormat.NWC, r.getRnnDataFormat());
        }
        assertFalse(fullLoss.equals(new LossLayer.Builder(LossFunction.XENT).activation(Activation.SIGMOID).name("l")
                .dropOut(0.5).build()), "an RnnLossLayer is not a LossLayer with the same settings");
    }

    @Test
    void embeddingSequenceLayer() throws Exception {
        EmbeddingSequenceLayer e = new EmbeddingSequenceLayer.Builder().nIn(10).nOut(4).build();
        assertFalse(e.hasBias());
        assertEquals(1, e.getInputLength());
        assertTrue(e.isInferInputLength());
        assertEquals(RNNFormat.NCW, e.getOutputFormat());
        assertEquals(base("nIn", "nOut", "hasBias", "inputLength", "inferInputLength", "outputFormat"),
                fieldNames(json(e, Layer.class)));
        Layer full = allBaseOptions(new EmbeddingSequenceLayer.Builder()).nIn(10).nOut(4).hasBias(true).inputLength(7)
                .inferInputLength(false).outputDataFormat(RNNFormat.NWC).build();
        for (Layer c : copies(full)) {
            EmbeddingSequenceLayer s = assertInstanceOf(EmbeddingSequenceLayer.class, c);
            checkAllBaseOptions(s);
            assertTrue(s.hasBias());
            assertEquals(7, s.getInputLength());
            assertFalse(s.isInferInputLength());
            assertEquals(RNNFormat.NWC, s.getOutputFormat());
        }
    }

    @Test
    void wrappersRoundTripAndName() throws Exception {
        LSTM lstm = new LSTM.Builder().name("enc").nIn(3).nOut(4).activation(Activation.TANH).build();
        Bidirectional bi = new Bidirectional(Bidirectional.Mode.ADD, lstm);
        assertEquals("enc", bi.getLayerName(), "the wrapper takes the wrapped layer's name");
        assertEquals(0.0, bi.getDropOut(), "the wrapped layer applies the input dropout");
        assertEquals(3L, bi.getNIn());
        assertEquals(4L, bi.getNOut());
        assertEquals(4L, new Bidirectional(lstm).getNOut(), "the wrapped nOut, as the reference (CONCAT doubles the "
                + "output type, not nOut)");
        assertEquals(Bidirectional.Mode.CONCAT, new Bidirectional(lstm).getMode());
        assertEquals(lstm, bi.getBwd());
        assertNotSame(bi.getFwd(), bi.getBwd());
        JsonNode n = json(bi, Layer.class);
        assertEquals(Set.of("type", "name", "dropOut", "mode", "fwd"), fieldNames(n));
        assertEquals("ADD", n.get("mode").asText());
        assertEquals("LSTM", n.get("fwd").get("type").asText());
        for (Layer c : copies(bi)) {
            Bidirectional b = assertInstanceOf(Bidirectional.class, c);
            assertEquals(Bidirectional.Mode.ADD, b.getMode());
            assertEquals(lstm, b.getFwd());
        }
        for (Bidirectional.Mode m : Bidirectional.Mode.values()) {
            assertEquals(m, assertInstanceOf(Bidirectional.class, copies(new Bidirectional.Builder().mode(m)
                    .rnnLayer(new GravesLSTM.Builder().nOut(2).build()).name("b").dropOut(0.8).build())[0]).getMode());
        }

        LastTimeStep last = new LastTimeStep(bi);
        assertEquals(Set.of("type", "name", "dropOut", "underlying"), fieldNames(json(last, Layer.class)));
        for (Layer c : copies(last)) {
            assertEquals(bi, assertInstanceOf(LastTimeStep.class, c).getUnderlying());
        }
        MaskZeroLayer mz = new MaskZeroLayer.Builder().underlying(new SimpleRnn.Builder().nOut(2).build())
                .maskValue(-1.5).name("mz").build();
        assertEquals(Set.of("type", "name", "dropOut", "underlying", "maskingValue"), fieldNames(json(mz, Layer.class)));
        for (Layer c : copies(mz)) {
            MaskZeroLayer m = assertInstanceOf(MaskZeroLayer.class, c);
            assertEquals(-1.5, m.getMaskingValue());
            assertEquals("mz", m.getLayerName());
        }
        assertEquals(0.0, new MaskZeroLayer(lstm).getMaskingValue());
        TimeDistributed td = new TimeDistributed(new DenseLayer.Builder().nOut(3).build(), RNNFormat.NWC);
        assertEquals(Set.of("type", "name", "dropOut", "underlying", "rnnDataFormat"), fieldNames(json(td, Layer.class)));
        for (Layer c : copies(td)) {
            TimeDistributed t = assertInstanceOf(TimeDistributed.class, c);
            assertEquals(RNNFormat.NWC, t.getRnnDataFormat());
            assertInstanceOf(DenseLayer.class, t.getUnderlying());
        }
        assertEquals(RNNFormat.NCW, new TimeDistributed(new DenseLayer.Builder().nOut(3).build()).getRnnDataFormat());
        // the wrapper holds a copy: changing the original later does not reach it
        lstm.setNOut(99L);
        assertEquals(4L, ((LSTM) bi.getFwd()).getNOut());
    }

    @Test
    void wrappingTheWrongKindOfLayerIsRefused() {
        DenseLayer dense = new DenseLayer.Builder().nIn(3).nOut(2).build();
        LSTM lstm = new LSTM.Builder().nOut(2).build();
        String m = invalid(() -> new Bidirectional(dense));
        assertTrue(m.contains("Bidirectional") && m.contains("non-recurrent") && m.contains("DenseLayer"), m);
        m = invalid(() -> new Bidirectional(new Bidirectional(lstm)));
        assertTrue(m.contains("non-recurrent") && m.contains("got Bidirectional"), m);
        m = invalid(() -> new LastTimeStep(dense));
        assertTrue(m.contains("LastTimeStep") && m.contains("recurrent layer") && m.contains("DenseLayer"), m);
        m = invalid(() -> new LastTimeStep(new TimeDistributed(dense)));
        assertTrue(m.contains("TimeDistributed"), m);
        m = invalid(() -> new MaskZeroLayer(new OutputLayer.Builder().nOut(2).build(), 0));
        assertTrue(m.contains("MaskZeroLayer") && m.contains("OutputLayer"), m);
        m = invalid(() -> new TimeDistributed(lstm));
        assertTrue(m.contains("TimeDistributed") && m.contains("feed-forward") && m.contains("LSTM"), m);
        m = invalid(() -> new MaskZeroLayer(lstm, Double.NaN));
        assertTrue(m.contains("maskingValue"), m);
        m = invalid(() -> new Bidirectional.Builder().build());
        assertTrue(m.contains("not set"), m);
        // wrappers around recurrent layers are recurrent
        new LastTimeStep(new MaskZeroLayer(new Bidirectional(lstm)));
        new Bidirectional(new MaskZeroLayer(lstm));
    }

    @Test
    void aWrongWrapperInJsonIsRefusedByTheSettingsCheck() throws Exception {
        String json = "{\"type\":\"LastTimeStep\",\"name\":null,\"dropOut\":0.0,\"underlying\":"
                + JSON.writerFor(Layer.class).writeValueAsString(new DenseLayer.Builder().nIn(2).nOut(2).build()) + "}";
        Layer l = JSON.readValue(json, Layer.class);
        DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class, () -> l.checkSettings("layer 1 (LastTimeStep)"));
        assertTrue(e.getMessage().contains("layer 1 (LastTimeStep)") && e.getMessage().contains("DenseLayer"),
                e.getMessage());
    }

    @Test
    void unknownRnnFormatIsRefusedNamingIt() {
        String json = "{\"type\":\"SimpleRnn\",\"nOut\":2,\"rnnDataFormat\":\"NTC\"}";
        Exception e = assertThrows(Exception.class, () -> JSON.readValue(json, Layer.class));
        assertTrue(e.getMessage().contains("NTC") && e.getMessage().contains("RNNFormat")
                && e.getMessage().contains("NCW") && e.getMessage().contains("NWC"), e.getMessage());
    }

    @Test
    void recurrentInputTypeJson() throws Exception {
        JsonNode unknown = json(InputType.recurrent(4), InputType.class);
        assertEquals("{\"type\":\"recurrent\",\"size\":4,\"timeSeriesLength\":0}", unknown.toString());
        assertEquals(-1, ((InputType.InputTypeRecurrent) InputType.recurrent(4)).getTimeSeriesLength());
        assertEquals("{\"type\":\"recurrent\",\"size\":4,\"timeSeriesLength\":7}",
                json(InputType.recurrent(4, 7), InputType.class).toString());
        assertEquals("{\"type\":\"recurrent\",\"size\":4,\"timeSeriesLength\":7,\"format\":\"NWC\"}",
                json(InputType.recurrent(4, 7, RNNFormat.NWC), InputType.class).toString());
        for (InputType t : new InputType[] {InputType.recurrent(4), InputType.recurrent(4, 7),
            InputType.recurrent(4, 7, RNNFormat.NWC), InputType.recurrent(3, RNNFormat.NWC)}) {
            InputType back = JSON.readValue(JSON.writerFor(InputType.class).writeValueAsString(t), InputType.class);
            assertEquals(t, back);
            assertEquals(t, SerializationUtil.javaRoundTrip(t));
        }
        assertEquals(RNNFormat.NWC, ((InputType.InputTypeRecurrent) InputType.recurrent(3, RNNFormat.NWC)).getFormat());
        assertEquals(-1, ((InputType.InputTypeRecurrent) JSON.readValue(
                "{\"type\":\"recurrent\",\"size\":4,\"timeSeriesLength\":0}", InputType.class)).getTimeSeriesLength());
        assertEquals(RNNFormat.NCW, ((InputType.InputTypeRecurrent) JSON.readValue(
                "{\"type\":\"recurrent\",\"size\":4,\"timeSeriesLength\":3}", InputType.class)).getFormat());
        assertThrows(Exception.class, () -> JSON.readValue(
                "{\"type\":\"recurrent\",\"size\":4,\"timeSeriesLength\":3,\"format\":\"CNW\"}", InputType.class));
        assertEquals(28L, InputType.recurrent(4, 7).arrayElementsPerExample());
    }

    @Test
    void preprocessorsJson() throws Exception {
        assertEquals("{\"type\":\"RnnToFeedForwardPreProcessor\",\"rnnDataFormat\":\"NCW\"}",
                json(new RnnToFeedForwardPreProcessor(), InputPreProcessor.class).toString());
        assertEquals("{\"type\":\"FeedForwardToRnnPreProcessor\",\"rnnDataFormat\":\"NWC\"}",
                json(new FeedForwardToRnnPreProcessor(RNNFormat.NWC), InputPreProcessor.class).toString());
        assertEquals("{\"type\":\"CnnToRnnPreProcessor\",\"inputHeight\":5,\"inputWidth\":6,\"numChannels\":2,"
                + "\"rnnDataFormat\":\"NCW\"}", json(new CnnToRnnPreProcessor(5, 6, 2), InputPreProcessor.class).toString());
        assertEquals("{\"type\":\"RnnToCnnPreProcessor\",\"inputHeight\":5,\"inputWidth\":6,\"numChannels\":2,"
                + "\"rnnDataFormat\":\"NWC\"}",
                json(new RnnToCnnPreProcessor(5, 6, 2, RNNFormat.NWC), InputPreProcessor.class).toString());
        for (InputPreProcessor p : new InputPreProcessor[] {new RnnToFeedForwardPreProcessor(RNNFormat.NWC),
            new FeedForwardToRnnPreProcessor(), new CnnToRnnPreProcessor(5, 6, 2, RNNFormat.NWC),
            new RnnToCnnPreProcessor(3, 4, 1)}) {
            assertEquals(p, JSON.readValue(JSON.writerFor(InputPreProcessor.class).writeValueAsString(p),
                    InputPreProcessor.class));
            assertEquals(p, YAML.readValue(YAML.writerFor(InputPreProcessor.class).writeValueAsString(p),
                    InputPreProcessor.class));
            assertEquals(p, SerializationUtil.javaRoundTrip(p));
            assertEquals(p, p.clone());
            assertNotSame(p, p.clone());
        }
        assertFalse(new CnnToRnnPreProcessor(5, 6, 2).equals(new CnnToRnnPreProcessor(5, 6, 2, RNNFormat.NWC)));
        assertFalse(new RnnToFeedForwardPreProcessor().equals(new FeedForwardToRnnPreProcessor()));
    }

    @Test
    void verticesJson() throws Exception {
        assertEquals("{\"type\":\"LastTimeStepVertex\",\"maskArrayInputName\":\"in\"}",
                json(new LastTimeStepVertex("in"), GraphVertex.class).toString());
        assertEquals("{\"type\":\"DuplicateToTimeSeriesVertex\",\"inputName\":\"seq\"}",
                json(new DuplicateToTimeSeriesVertex("seq"), GraphVertex.class).toString());
        for (GraphVertex v : new GraphVertex[] {new LastTimeStepVertex("in"), new LastTimeStepVertex(null),
            new DuplicateToTimeSeriesVertex("seq")}) {
            assertEquals(v, JSON.readValue(JSON.writerFor(GraphVertex.class).writeValueAsString(v), GraphVertex.class));
            assertEquals(v, SerializationUtil.javaRoundTrip(v));
            assertEquals(v, v.clone());
        }
        assertEquals("in", new LastTimeStepVertex("in").getMaskArrayInputName());
        assertEquals("seq", new DuplicateToTimeSeriesVertex("seq").getInputName());
    }

    @Test
    void aConfigurationReadFromJsonWithABidirectionalDenseLayerIsRefused() {
        String json = "{\"formatVersion\":1,\"seed\":1,\"layers\":[{\"type\":\"Bidirectional\",\"name\":null,"
                + "\"dropOut\":0.0,\"mode\":\"ADD\",\"fwd\":{\"type\":\"DenseLayer\",\"nIn\":2,\"nOut\":3}}]}";
        String m = invalid(() -> org.ferrodl.nn.conf.MultiLayerConfiguration.fromJson(json));
        assertTrue(m.contains("layer 0 (Bidirectional)") && m.contains("non-recurrent") && m.contains("DenseLayer"), m);
        String unknownFormat = "{\"formatVersion\":1,\"seed\":1,\"layers\":[{\"type\":\"LSTM\",\"nOut\":3,"
                + "\"rnnDataFormat\":\"NHWC\"}]}";
        m = invalid(() -> org.ferrodl.nn.conf.MultiLayerConfiguration.fromJson(unknownFormat));
        assertTrue(m.contains("NHWC") && m.contains("RNNFormat"), m);
    }
}
