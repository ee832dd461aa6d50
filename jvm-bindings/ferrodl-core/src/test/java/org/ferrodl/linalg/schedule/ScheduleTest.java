package org.ferrodl.linalg.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ferrodl.nn.conf.serde.JsonMappers;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** Values by hand (the same numbers as native/optim's schedule tests), JSON and validation. */
class ScheduleTest {
    private static final ObjectMapper JSON = JsonMappers.getMapper();

    private static void close(double expected, double actual) {
        assertEquals(expected, actual, 1e-12 * (1 + Math.abs(expected)));
    }

    @Test
    void stepSchedule() {
        // 0.1 * 0.5^floor(i/100), by iteration; the epoch is ignored.
        StepSchedule s = new StepSchedule(ScheduleType.ITERATION, 0.1, 0.5, 100);
        close(0.1, s.valueAt(0, 7));
        close(0.1, s.valueAt(99, 7));
        close(0.05, s.valueAt(100, 0));
        close(0.025, s.valueAt(250, 0));
        // A fractional step, by epoch: 1.0 * 0.1^floor(e/2.5).
        StepSchedule f = new StepSchedule(ScheduleType.EPOCH, 1.0, 0.1, 2.5);
        close(1.0, f.valueAt(1000, 0));
        close(1.0, f.valueAt(0, 2));
        close(0.1, f.valueAt(0, 3));
        close(0.01, f.valueAt(0, 5));
    }

    @Test
    void exponentialSchedule() {
        ExponentialSchedule s = new ExponentialSchedule(ScheduleType.ITERATION, 0.2, 0.9);
        close(0.2, s.valueAt(0, 0));
        close(0.18, s.valueAt(1, 0));
        close(0.1458, s.valueAt(3, 9)); // 0.2 * 0.729
    }

    @Test
    void inverseSchedule() {
        InverseSchedule s = new InverseSchedule(ScheduleType.EPOCH, 0.1, 0.5, 2);
        close(0.1, s.valueAt(50, 0));
        close(0.1 / 2.25, s.valueAt(50, 1)); // 1.5^2
        close(0.1 / 9.0, s.valueAt(50, 4)); // 3^2
    }

    @Test
    void polySchedule() {
        PolySchedule s = new PolySchedule(ScheduleType.ITERATION, 0.1, 2, 100);
        close(0.1, s.valueAt(0, 0));
        close(0.1 / 2.25, s.valueAt(50, 0)); // (1 + 0.5)^-2
        close(0.1 / 3.9601, s.valueAt(99, 0)); // (1 + 0.99)^-2
        assertEquals(0.0, s.valueAt(100, 0));
        assertEquals(0.0, s.valueAt(1000, 0));
    }

    @Test
    void sigmoidSchedule() {
        SigmoidSchedule s = new SigmoidSchedule(ScheduleType.ITERATION, 0.1, 0.5, 10);
        close(0.05, s.valueAt(10, 0));
        close(0.1 / (1 + Math.exp(5)), s.valueAt(0, 0));
        close(0.1 / (1 + Math.exp(-5)), s.valueAt(20, 0));
    }

    @Test
    void mapSchedule() {
        MapSchedule s = new MapSchedule.Builder(ScheduleType.EPOCH).add(0, 0.1).add(10, 0.01).add(20, 0.001).build();
        int[] epochs = {0, 9, 10, 15, 20, 1000};
        double[] values = {0.1, 0.1, 0.01, 0.01, 0.001, 0.001};
        for (int i = 0; i < epochs.length; i++) {
            close(values[i], s.valueAt(12345, epochs[i]));
        }
        assertEquals(ScheduleType.EPOCH, s.getScheduleType());
        assertEquals(List.of(0, 10, 20), List.copyOf(s.getValues().keySet()));
        assertThrows(UnsupportedOperationException.class, () -> s.getValues().put(5, 1.0));
    }

    @Test
    void invalidParametersAreRefusedNamingFieldAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new StepSchedule(ScheduleType.ITERATION, 0.1, 0.5, 0));
        assertEquals("StepSchedule: step must be finite and > 0, got 0.0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new StepSchedule(null, 0.1, 0.5, 1));
        assertEquals("StepSchedule: scheduleType must be ITERATION or EPOCH, got null", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new ExponentialSchedule(ScheduleType.EPOCH, -1, 0.5));
        assertEquals("ExponentialSchedule: initialValue must be finite and >= 0, got -1.0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new InverseSchedule(ScheduleType.EPOCH, 0.1, -0.5, 1));
        assertEquals("InverseSchedule: gamma must be finite and >= 0, got -0.5", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new InverseSchedule(ScheduleType.EPOCH, 0.1, 0.5, Double.NaN));
        assertEquals("InverseSchedule: power must be finite, got NaN", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new PolySchedule(ScheduleType.ITERATION, 0.1, 1, 0));
        assertEquals("PolySchedule: maxIter must be > 0, got 0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new SigmoidSchedule(ScheduleType.ITERATION, 0.1, Double.POSITIVE_INFINITY, 3));
        assertEquals("SigmoidSchedule: gamma must be finite, got Infinity", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new MapSchedule.Builder(ScheduleType.EPOCH).add(5, 0.1).build());
        assertEquals("MapSchedule: values must contain the initial value at position 0, got {5=0.1}", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new MapSchedule.Builder(ScheduleType.EPOCH).add(0, 0.1).add(3, -0.2).build());
        assertEquals("MapSchedule: values[3] must be finite and >= 0, got -0.2", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new MapSchedule.Builder(ScheduleType.EPOCH).add(0, 0.1).add(-3, 0.2).build());
        assertEquals("MapSchedule: positions must be >= 0, got -3", e.getMessage());
    }

    static List<ISchedule> everySchedule() {
        Map<Integer, Double> m = new LinkedHashMap<>();
        m.put(10, 0.5);
        m.put(0, 0.9);
        return List.of(new StepSchedule(ScheduleType.ITERATION, 0.1, 0.5, 100),
                new ExponentialSchedule(ScheduleType.EPOCH, 0.2, 0.9),
                new InverseSchedule(ScheduleType.ITERATION, 0.1, 0.5, 2),
                new PolySchedule(ScheduleType.ITERATION, 0.1, 2, 100),
                new SigmoidSchedule(ScheduleType.EPOCH, 0.1, 0.5, 10),
                new MapSchedule(ScheduleType.EPOCH, m));
    }

    @Test
    void jsonRoundTripOfEverySchedule() throws Exception {
        for (ISchedule s : everySchedule()) {
            String json = JSON.writeValueAsString(s);
            ISchedule back = JSON.readValue(json, ISchedule.class);
            assertEquals(s, back, json);
            assertEquals(s.hashCode(), back.hashCode());
            assertEquals(s, JsonMappers.getMapperYaml().readValue(JsonMappers.getMapperYaml().writeValueAsString(s),
                    ISchedule.class));
            assertEquals(s, SerializationUtil.javaRoundTrip(s));
            ISchedule c = s.clone();
            assertEquals(s, c);
            assertNotSame(s, c);
            JsonNode n = JSON.readTree(json);
            assertEquals(s.getClass().getSimpleName(), n.get("type").asText(), json);
            assertEquals(s.getScheduleType().name(), n.get("scheduleType").asText());
        }
    }

    /** The exact JSON the native engine reads (native/optim/src/tests/json.rs). */
    @Test
    void jsonFieldsAreTheEngines() throws Exception {
        String[] expected = {
            "{\"type\":\"StepSchedule\",\"scheduleType\":\"ITERATION\",\"initialValue\":0.1,\"decayRate\":0.5,"
                    + "\"step\":100.0}",
            "{\"type\":\"ExponentialSchedule\",\"scheduleType\":\"EPOCH\",\"initialValue\":0.2,\"gamma\":0.9}",
            "{\"type\":\"InverseSchedule\",\"scheduleType\":\"ITERATION\",\"initialValue\":0.1,\"gamma\":0.5,"
                    + "\"power\":2.0}",
            "{\"type\":\"PolySchedule\",\"scheduleType\":\"ITERATION\",\"initialValue\":0.1,\"power\":2.0,"
                    + "\"maxIter\":100}",
            "{\"type\":\"SigmoidSchedule\",\"scheduleType\":\"EPOCH\",\"initialValue\":0.1,\"gamma\":0.5,"
                    + "\"stepSize\":10}",
            "{\"type\":\"MapSchedule\",\"scheduleType\":\"EPOCH\",\"values\":{\"0\":0.9,\"10\":0.5}}"};
        List<ISchedule> all = everySchedule();
        for (int i = 0; i < expected.length; i++) {
            assertEquals(JSON.readTree(expected[i]), JSON.readTree(JSON.writeValueAsString(all.get(i))));
            assertEquals(all.get(i), JSON.readValue(expected[i], ISchedule.class));
        }
    }

    @Test
    void malformedJsonIsRefused() {
        // Missing field, unknown field, unknown type, invalid value.
        Exception e = assertThrows(Exception.class, () -> JSON.readValue(
                "{\"type\":\"StepSchedule\",\"scheduleType\":\"ITERATION\",\"initialValue\":0.1,\"decayRate\":0.5}",
                ISchedule.class));
        assertTrue(e.getMessage().contains("step"), e.getMessage());
        e = assertThrows(Exception.class, () -> JSON.readValue("{\"type\":\"ExponentialSchedule\",\"scheduleType\":"
                + "\"EPOCH\",\"initialValue\":0.2,\"gamma\":0.9,\"power\":1}", ISchedule.class));
        assertTrue(e.getMessage().contains("power"), e.getMessage());
        e = assertThrows(Exception.class, () -> JSON.readValue("{\"type\":\"CycleSchedule\"}", ISchedule.class));
        assertTrue(e.getMessage().contains("CycleSchedule"), e.getMessage());
        e = assertThrows(Exception.class, () -> JSON.readValue(
                "{\"type\":\"MapSchedule\",\"scheduleType\":\"EPOCH\",\"values\":{\"1\":0.5}}", ISchedule.class));
        assertTrue(e.getMessage().contains("position 0"), e.getMessage());
    }
}
