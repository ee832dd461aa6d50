package org.ferrodl.optimize.solvers.accumulation.encoding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.NoOpResidualPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.ResidualClippingPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.FixedThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Threshold algorithms and residual post-processors: defaults, validation, native JSON, Jackson. */
class EncodingConfigTest {
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
    private static final double DECAY = Math.pow(0.5, 1 / 20.0);
    /** Doubles whose shortest decimal form has many digits, to catch lossy formatting. */
    private static final double AWKWARD = 0.1 + 0.2;

    // ------------------------------------------------------------------------------------ defaults

    @Test
    void defaultsAreTheReferenceDefaults() {
        AdaptiveThresholdAlgorithm a = new AdaptiveThresholdAlgorithm();
        assertEquals(1e-4, a.getInitialThreshold());
        assertEquals(1e-4, a.getMinTargetSparsity());
        assertEquals(1e-2, a.getMaxTargetSparsity());
        assertEquals(DECAY, a.getDecayRate());
        assertEquals(0.5, Math.pow(a.getDecayRate(), 20), 1e-12); // 20 steps halve the threshold

        AdaptiveThresholdAlgorithm a1 = new AdaptiveThresholdAlgorithm(3e-3);
        assertEquals(3e-3, a1.getInitialThreshold());
        assertEquals(1e-4, a1.getMinTargetSparsity());
        assertEquals(1e-2, a1.getMaxTargetSparsity());
        assertEquals(DECAY, a1.getDecayRate());
        assertEquals(new AdaptiveThresholdAlgorithm(1e-4, 1e-4, 1e-2, DECAY), a);

        TargetSparsityThresholdAlgorithm t = new TargetSparsityThresholdAlgorithm();
        assertEquals(1e-4, t.getInitialThreshold());
        assertEquals(1e-3, t.getSparsityTarget());
        assertEquals(DECAY, t.getDecayRate());
        assertEquals(new TargetSparsityThresholdAlgorithm(1e-4, 1e-3, DECAY), t);

        assertEquals(2e-3, new FixedThresholdAlgorithm(2e-3).getThreshold());
        ResidualClippingPostProcessor c = new ResidualClippingPostProcessor(5.0, 5);
        assertEquals(5.0, c.getThresholdMultipleClipValue());
        assertEquals(5, c.getFrequency());
    }

    // ---------------------------------------------------------------------------------- validation

    @Test
    void thresholdsAreValidatedNamingTheArgument() {
        for (double bad : new double[] {0, -1e-4, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
                1e-31, 1e31}) {
            refused("initialThreshold", bad, () -> new AdaptiveThresholdAlgorithm(bad));
            refused("initialThreshold", bad, () -> new AdaptiveThresholdAlgorithm(bad, 1e-4, 1e-2, 0.9));
            refused("initialThreshold", bad, () -> new TargetSparsityThresholdAlgorithm(bad, 1e-3, 0.9));
            refused("threshold", bad, () -> new FixedThresholdAlgorithm(bad));
        }
        // the native range's ends are accepted
        assertEquals(1e-30, new FixedThresholdAlgorithm(1e-30).getThreshold());
        assertEquals(1e30, new AdaptiveThresholdAlgorithm(1e30).getInitialThreshold());
    }

    @Test
    void sparsitiesAndDecayAreValidatedNamingTheArgument() {
        for (double bad : new double[] {0, -0.1, 1.0000001, 2, Double.NaN, Double.POSITIVE_INFINITY}) {
            refused("minTargetSparsity", bad, () -> new AdaptiveThresholdAlgorithm(1e-4, bad, 1.0, 0.9));
            refused("maxTargetSparsity", bad, () -> new AdaptiveThresholdAlgorithm(1e-4, 1e-4, bad, 0.9));
            refused("sparsityTarget", bad, () -> new TargetSparsityThresholdAlgorithm(1e-4, bad, 0.9));
        }
        for (double bad : new double[] {0, 1, -0.5, 1.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            refused("decayRate", bad, () -> new AdaptiveThresholdAlgorithm(1e-4, 1e-4, 1e-2, bad));
            refused("decayRate", bad, () -> new TargetSparsityThresholdAlgorithm(1e-4, 1e-3, bad));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new AdaptiveThresholdAlgorithm(1e-4, 0.2, 0.1, 0.9));
        assertTrue(e.getMessage().contains("minTargetSparsity") && e.getMessage().contains("maxTargetSparsity")
                && e.getMessage().contains("0.2") && e.getMessage().contains("0.1"), e.getMessage());
        // boundaries that are allowed: sparsity 1, min == max
        AdaptiveThresholdAlgorithm edge = new AdaptiveThresholdAlgorithm(1e-4, 0.5, 0.5, 1e-9);
        assertEquals(0.5, edge.getMinTargetSparsity());
        assertEquals(1.0, new TargetSparsityThresholdAlgorithm(1e-4, 1.0, 0.99).getSparsityTarget());
    }

    @Test
    void clippingIsValidatedNamingTheArgument() {
        for (double bad : new double[] {0, -5, Double.NaN, Double.POSITIVE_INFINITY}) {
            refused("thresholdMultipleClipValue", bad, () -> new ResidualClippingPostProcessor(bad, 5));
        }
        for (int bad : new int[] {0, -1, Integer.MIN_VALUE}) {
            refused("frequency", bad, () -> new ResidualClippingPostProcessor(5.0, bad));
        }
        assertEquals(1, new ResidualClippingPostProcessor(Double.MIN_VALUE, 1).getFrequency());
    }

    private static void refused(String argument, Object value, Executable construct) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, construct,
                argument + " = " + value + " was accepted");
        assertTrue(e.getMessage().contains(argument), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(value)), e.getMessage());
    }

    // --------------------------------------------------------------------------------- native JSON

    @Test
    void nativeJsonHasTheExactShapes() {
        assertEquals("{\"type\":\"adaptive\",\"initialThreshold\":1.0E-4,\"minTargetSparsity\":1.0E-4,"
                + "\"maxTargetSparsity\":0.01,\"decayRate\":" + Double.toString(DECAY) + "}",
                new AdaptiveThresholdAlgorithm().toNativeJson());
        assertEquals("{\"type\":\"targetSparsity\",\"initialThreshold\":1.0E-4,\"sparsityTarget\":0.001,"
                + "\"decayRate\":" + Double.toString(DECAY) + "}", new TargetSparsityThresholdAlgorithm().toNativeJson());
        assertEquals("{\"type\":\"fixed\",\"threshold\":0.003}", new FixedThresholdAlgorithm(3e-3).toNativeJson());
        assertEquals("{\"type\":\"clipping\",\"thresholdMultipleClipValue\":5.0,\"frequency\":5}",
                new ResidualClippingPostProcessor(5.0, 5).toNativeJson());
        assertEquals("{\"type\":\"noop\"}", new NoOpResidualPostProcessor().toNativeJson());
    }

    @Test
    void nativeJsonParsesBackFieldByFieldExactly() throws Exception {
        JsonNode a = parse(new AdaptiveThresholdAlgorithm(AWKWARD * 1e-4, 1e-4 / 3, AWKWARD / 7, DECAY).toNativeJson(),
                "type", "initialThreshold", "minTargetSparsity", "maxTargetSparsity", "decayRate");
        assertEquals("adaptive", a.get("type").textValue());
        assertExact(AWKWARD * 1e-4, a.get("initialThreshold"));
        assertExact(1e-4 / 3, a.get("minTargetSparsity"));
        assertExact(AWKWARD / 7, a.get("maxTargetSparsity"));
        assertExact(DECAY, a.get("decayRate"));

        JsonNode t = parse(new TargetSparsityThresholdAlgorithm(1e-30, 2.0 / 3, Math.nextDown(1.0)).toNativeJson(),
                "type", "initialThreshold", "sparsityTarget", "decayRate");
        assertEquals("targetSparsity", t.get("type").textValue());
        assertExact(1e-30, t.get("initialThreshold"));
        assertExact(2.0 / 3, t.get("sparsityTarget"));
        assertExact(Math.nextDown(1.0), t.get("decayRate"));

        JsonNode f = parse(new FixedThresholdAlgorithm(1e30).toNativeJson(), "type", "threshold");
        assertEquals("fixed", f.get("type").textValue());
        assertExact(1e30, f.get("threshold"));

        JsonNode c = parse(new ResidualClippingPostProcessor(AWKWARD, Integer.MAX_VALUE).toNativeJson(),
                "type", "thresholdMultipleClipValue", "frequency");
        assertEquals("clipping", c.get("type").textValue());
        assertExact(AWKWARD, c.get("thresholdMultipleClipValue"));
        assertTrue(c.get("frequency").isIntegralNumber());
        assertEquals(Integer.MAX_VALUE, c.get("frequency").intValue());

        assertEquals("noop", parse(new NoOpResidualPostProcessor().toNativeJson(), "type").get("type").textValue());
    }

    /** Parses {@code json} (exact decimals) and checks it has exactly {@code fields}, in this order. */
    private static JsonNode parse(String json, String... fields) throws Exception {
        JsonNode node = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS).readTree(json);
        List<String> names = new ArrayList<>();
        Iterator<String> it = node.fieldNames();
        it.forEachRemaining(names::add);
        assertEquals(List.of(fields), names, json);
        return node;
    }

    private static void assertExact(double expected, JsonNode number) {
        assertTrue(number.isNumber(), number + " is not a JSON number");
        // the decimal exactly as written (BigDecimal), rounded once to the nearest double
        double parsed = number.decimalValue().doubleValue();
        assertEquals(Double.doubleToLongBits(expected), Double.doubleToLongBits(parsed),
                "expected " + expected + ", JSON has " + number.asText());
    }

    // ------------------------------------------------------------------------ Jackson polymorphism

    @Test
    void jacksonRoundTripsThroughTheInterfacesWithTheNativeTypeNames() throws Exception {
        List<ThresholdAlgorithm> algorithms = List.of(new AdaptiveThresholdAlgorithm(),
                new AdaptiveThresholdAlgorithm(AWKWARD, 1e-3, 0.5, 0.75),
                new TargetSparsityThresholdAlgorithm(), new TargetSparsityThresholdAlgorithm(2e-4, 3e-3, 0.9),
                new FixedThresholdAlgorithm(1e-3));
        for (ThresholdAlgorithm alg : algorithms) {
            for (ObjectMapper om : List.of(JSON, YAML)) {
                String text = om.writerFor(ThresholdAlgorithm.class).writeValueAsString(alg);
                ThresholdAlgorithm back = om.readValue(text, ThresholdAlgorithm.class);
                assertEquals(alg, back, text);
                assertEquals(alg.hashCode(), back.hashCode());
            }
            // the Jackson form and the native form are the same object
            String json = JSON.writerFor(ThresholdAlgorithm.class).writeValueAsString(alg);
            assertEquals(fields(alg.toNativeJson()), fields(json));
        }
        List<ResidualPostProcessor> processors = List.of(new ResidualClippingPostProcessor(5.0, 5),
                new ResidualClippingPostProcessor(AWKWARD, 17), new NoOpResidualPostProcessor());
        for (ResidualPostProcessor p : processors) {
            for (ObjectMapper om : List.of(JSON, YAML)) {
                String text = om.writerFor(ResidualPostProcessor.class).writeValueAsString(p);
                ResidualPostProcessor back = om.readValue(text, ResidualPostProcessor.class);
                assertEquals(p, back, text);
            }
            String json = JSON.writerFor(ResidualPostProcessor.class).writeValueAsString(p);
            assertEquals(fields(p.toNativeJson()), fields(json));
        }
        // a type name selects the class
        assertInstanceOf(FixedThresholdAlgorithm.class,
                JSON.readValue("{\"type\":\"fixed\",\"threshold\":0.5}", ThresholdAlgorithm.class));
        assertInstanceOf(NoOpResidualPostProcessor.class, JSON.readValue("{\"type\":\"noop\"}", ResidualPostProcessor.class));
    }

    private static Map<String, String> fields(String json) throws Exception {
        Map<String, String> out = new TreeMap<>();
        JSON.readTree(json).fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    @Test
    void jacksonRefusesUnknownTypesFieldsAndInvalidValues() {
        assertThrows(Exception.class, () -> JSON.readValue("{\"type\":\"magic\",\"threshold\":0.5}", ThresholdAlgorithm.class));
        assertThrows(Exception.class, () -> JSON.readValue("{\"threshold\":0.5}", ThresholdAlgorithm.class));
        assertThrows(Exception.class,
                () -> JSON.readValue("{\"type\":\"fixed\",\"threshold\":0.5,\"extra\":1}", ThresholdAlgorithm.class));
        Exception e = assertThrows(Exception.class,
                () -> JSON.readValue("{\"type\":\"fixed\",\"threshold\":-0.5}", ThresholdAlgorithm.class));
        assertTrue(String.valueOf(e.getMessage()).contains("threshold"), e.getMessage());
        e = assertThrows(Exception.class, () -> JSON.readValue(
                "{\"type\":\"clipping\",\"thresholdMultipleClipValue\":5.0,\"frequency\":0}", ResidualPostProcessor.class));
        assertTrue(String.valueOf(e.getMessage()).contains("frequency"), e.getMessage());
        assertThrows(Exception.class, () -> JSON.readValue("{\"type\":\"adaptive\"}", ResidualPostProcessor.class));
    }

    // ------------------------------------------------------------- equality, Java serialization

    @Test
    void equalsHashCodeToStringAndJavaSerialization() throws Exception {
        List<Object> all = List.of(new AdaptiveThresholdAlgorithm(), new AdaptiveThresholdAlgorithm(2e-4),
                new AdaptiveThresholdAlgorithm(1e-4, 2e-4, 1e-2, DECAY), new AdaptiveThresholdAlgorithm(1e-4, 1e-4, 2e-2, DECAY),
                new AdaptiveThresholdAlgorithm(1e-4, 1e-4, 1e-2, 0.9), new TargetSparsityThresholdAlgorithm(),
                new TargetSparsityThresholdAlgorithm(2e-4, 1e-3, DECAY), new TargetSparsityThresholdAlgorithm(1e-4, 2e-3, DECAY),
                new TargetSparsityThresholdAlgorithm(1e-4, 1e-3, 0.9), new FixedThresholdAlgorithm(1e-4),
                new FixedThresholdAlgorithm(2e-4), new ResidualClippingPostProcessor(5.0, 5),
                new ResidualClippingPostProcessor(4.0, 5), new ResidualClippingPostProcessor(5.0, 4),
                new NoOpResidualPostProcessor());
        for (int i = 0; i < all.size(); i++) {
            Object x = all.get(i);
            Object copy = SerializationUtil.javaRoundTrip(x);
            assertEquals(x, copy);
            assertEquals(x.hashCode(), copy.hashCode());
            assertEquals(x.toString(), copy.toString());
            assertTrue(x.toString().startsWith(x.getClass().getSimpleName()), x.toString());
            for (int j = 0; j < all.size(); j++) {
                if (i != j) {
                    assertNotEquals(x, all.get(j), x + " vs " + all.get(j));
                }
            }
        }
        assertEquals(new NoOpResidualPostProcessor(), new NoOpResidualPostProcessor());
        assertEquals(new NoOpResidualPostProcessor().hashCode(), new NoOpResidualPostProcessor().hashCode());
        assertTrue(new AdaptiveThresholdAlgorithm().toString().contains("minTargetSparsity"));
    }
}
