package org.ferrodl.linalg.learning.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.ferrodl.linalg.schedule.ExponentialSchedule;
import org.ferrodl.linalg.schedule.ISchedule;
import org.ferrodl.linalg.schedule.MapSchedule;
import org.ferrodl.linalg.schedule.ScheduleType;
import org.ferrodl.linalg.schedule.StepSchedule;
import org.ferrodl.nn.conf.serde.JsonMappers;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** Every updater: defaults, constructors and builders, JSON (exactly the engine's), validation. */
class UpdaterConfigTest {
    private static final ObjectMapper JSON = JsonMappers.getMapper();

    private static final String STEP = "{\"type\":\"StepSchedule\",\"scheduleType\":\"ITERATION\","
            + "\"initialValue\":0.1,\"decayRate\":0.5,\"step\":100.0}";
    private static final String MAP = "{\"type\":\"MapSchedule\",\"scheduleType\":\"EPOCH\","
            + "\"values\":{\"0\":0.9,\"10\":0.5}}";

    private static ISchedule step() {
        return new StepSchedule(ScheduleType.ITERATION, 0.1, 0.5, 100);
    }

    private static ISchedule map() {
        return new MapSchedule.Builder(ScheduleType.EPOCH).add(0, 0.9).add(10, 0.5).build();
    }

    /**
     * Every updater with every option set, built through its builder, and the JSON the native
     * engine reads for it (the same strings as native/optim/src/tests/json.rs).
     */
    private static List<Object[]> everyUpdater() {
        return List.of(
                new Object[] {Sgd.builder().learningRate(0.2).learningRateSchedule(step()).build(),
                    "{\"type\":\"Sgd\",\"learningRate\":0.2,\"learningRateSchedule\":" + STEP + "}"},
                new Object[] {Adam.builder().learningRate(0.002).learningRateSchedule(step()).beta1(0.8).beta2(0.99)
                        .epsilon(1e-6).build(),
                    "{\"type\":\"Adam\",\"learningRate\":0.002,\"learningRateSchedule\":" + STEP
                            + ",\"beta1\":0.8,\"beta2\":0.99,\"epsilon\":1e-6}"},
                new Object[] {AdaMax.builder().learningRate(0.003).learningRateSchedule(step()).beta1(0.7)
                        .beta2(0.98).epsilon(1e-7).build(),
                    "{\"type\":\"AdaMax\",\"learningRate\":0.003,\"learningRateSchedule\":" + STEP
                            + ",\"beta1\":0.7,\"beta2\":0.98,\"epsilon\":1e-7}"},
                new Object[] {Nadam.builder().learningRate(0.004).learningRateSchedule(step()).beta1(0.6)
                        .beta2(0.97).epsilon(1e-5).build(),
                    "{\"type\":\"Nadam\",\"learningRate\":0.004,\"learningRateSchedule\":" + STEP
                            + ",\"beta1\":0.6,\"beta2\":0.97,\"epsilon\":1e-5}"},
                new Object[] {AMSGrad.builder().learningRate(0.005).learningRateSchedule(step()).beta1(0.5)
                        .beta2(0.96).epsilon(1e-4).build(),
                    "{\"type\":\"AMSGrad\",\"learningRate\":0.005,\"learningRateSchedule\":" + STEP
                            + ",\"beta1\":0.5,\"beta2\":0.96,\"epsilon\":1e-4}"},
                new Object[] {RmsProp.builder().learningRate(0.05).learningRateSchedule(step()).rmsDecay(0.9)
                        .epsilon(1e-7).build(),
                    "{\"type\":\"RmsProp\",\"learningRate\":0.05,\"learningRateSchedule\":" + STEP
                            + ",\"rmsDecay\":0.9,\"epsilon\":1e-7}"},
                new Object[] {Nesterovs.builder().learningRate(0.06).learningRateSchedule(step()).momentum(0.8)
                        .momentumSchedule(map()).build(),
                    "{\"type\":\"Nesterovs\",\"learningRate\":0.06,\"learningRateSchedule\":" + STEP
                            + ",\"momentum\":0.8,\"momentumSchedule\":" + MAP + "}"},
                new Object[] {AdaGrad.builder().learningRate(0.07).learningRateSchedule(map()).epsilon(1e-5).build(),
                    "{\"type\":\"AdaGrad\",\"learningRate\":0.07,\"learningRateSchedule\":" + MAP
                            + ",\"epsilon\":1e-5}"},
                new Object[] {AdaDelta.builder().rho(0.9).epsilon(1e-5).build(),
                    "{\"type\":\"AdaDelta\",\"rho\":0.9,\"epsilon\":1e-5}"},
                new Object[] {new NoOp(), "{\"type\":\"NoOp\"}"});
    }

    @Test
    void jsonRoundTripOfEveryUpdaterWithEveryOption() throws Exception {
        List<Object[]> all = everyUpdater();
        assertEquals(10, all.size());
        for (Object[] c : all) {
            IUpdater u = (IUpdater) c[0];
            String expected = (String) c[1];
            assertNull(u.validate(), u.toString());
            String json = JSON.writerFor(IUpdater.class).writeValueAsString(u);
            // Exactly the engine's fields and values.
            assertEquals(JSON.readTree(expected), JSON.readTree(json), json);
            // Every value survives, in JSON, in YAML, and in Java serialization.
            IUpdater back = JSON.readValue(json, IUpdater.class);
            assertEquals(u, back, json);
            assertEquals(u.hashCode(), back.hashCode());
            assertEquals(u, JSON.readValue(expected, IUpdater.class));
            String yaml = JsonMappers.getMapperYaml().writerFor(IUpdater.class).writeValueAsString(u);
            assertEquals(u, JsonMappers.getMapperYaml().readValue(yaml, IUpdater.class), yaml);
            assertEquals(u, SerializationUtil.javaRoundTrip(u));
            IUpdater copy = u.clone();
            assertEquals(u, copy);
            assertNotSame(u, copy);
        }
    }

    @Test
    void everyValueIsReadBack() throws Exception {
        Adam a = (Adam) JSON.readValue((String) everyUpdater().get(1)[1], IUpdater.class);
        assertEquals(0.002, a.getLearningRate());
        assertEquals(step(), a.getLearningRateSchedule());
        assertEquals(0.8, a.getBeta1());
        assertEquals(0.99, a.getBeta2());
        assertEquals(1e-6, a.getEpsilon());
        Nesterovs n = (Nesterovs) JSON.readValue((String) everyUpdater().get(6)[1], IUpdater.class);
        assertEquals(0.06, n.getLearningRate());
        assertEquals(step(), n.getLearningRateSchedule());
        assertEquals(0.8, n.getMomentum());
        assertEquals(map(), n.getMomentumSchedule());
        RmsProp r = (RmsProp) JSON.readValue((String) everyUpdater().get(5)[1], IUpdater.class);
        assertEquals(0.9, r.getRmsDecay());
        assertEquals(1e-7, r.getEpsilon());
        AdaDelta d = (AdaDelta) JSON.readValue((String) everyUpdater().get(8)[1], IUpdater.class);
        assertEquals(0.9, d.getRho());
        assertEquals(1e-5, d.getEpsilon());
    }

    @Test
    void withoutSchedulesTheJsonKeepsItsEarlierForm() throws Exception {
        JsonNode n = JSON.readTree(JSON.writerFor(IUpdater.class).writeValueAsString(new Nesterovs(0.05, 0.95)));
        assertEquals(Set.of("type", "learningRate", "momentum"), fields(n));
        n = JSON.readTree(JSON.writerFor(IUpdater.class).writeValueAsString(new Adam()));
        assertEquals(Set.of("type", "learningRate", "beta1", "beta2", "epsilon"), fields(n));
        n = JSON.readTree(JSON.writerFor(IUpdater.class).writeValueAsString(new Sgd(0.1)));
        assertEquals(JSON.readTree("{\"type\":\"Sgd\",\"learningRate\":0.1}"), n);
        // Older JSON, and JSON with explicit null schedules, read as before.
        assertEquals(new Nesterovs(0.05, 0.95), JSON.readValue(
                "{\"type\":\"Nesterovs\",\"learningRate\":0.05,\"momentum\":0.95}", IUpdater.class));
        assertEquals(new Adam(), JSON.readValue("{\"type\":\"Adam\",\"learningRateSchedule\":null}", IUpdater.class));
    }

    private static Set<String> fields(JsonNode n) {
        Set<String> s = new TreeSet<>();
        n.fieldNames().forEachRemaining(s::add);
        return s;
    }

    @Test
    void missingFieldsTakeTheDefaults() throws Exception {
        assertEquals(new Sgd(), JSON.readValue("{\"type\":\"Sgd\"}", IUpdater.class));
        assertEquals(new AdaMax(), JSON.readValue("{\"type\":\"AdaMax\"}", IUpdater.class));
        assertEquals(new Nadam(), JSON.readValue("{\"type\":\"Nadam\"}", IUpdater.class));
        assertEquals(new AMSGrad(), JSON.readValue("{\"type\":\"AMSGrad\"}", IUpdater.class));
        assertEquals(new RmsProp(), JSON.readValue("{\"type\":\"RmsProp\"}", IUpdater.class));
        assertEquals(new AdaGrad(), JSON.readValue("{\"type\":\"AdaGrad\"}", IUpdater.class));
        assertEquals(new AdaDelta(), JSON.readValue("{\"type\":\"AdaDelta\"}", IUpdater.class));
        assertEquals(new NoOp(), JSON.readValue("{\"type\":\"NoOp\"}", IUpdater.class));
    }

    @Test
    void unknownFieldsAreRefused() {
        Exception e = assertThrows(Exception.class,
                () -> JSON.readValue("{\"type\":\"Sgd\",\"learningRate\":0.1,\"momentum\":0.9}", IUpdater.class));
        assertTrue(e.getMessage().contains("momentum"), e.getMessage());
        e = assertThrows(Exception.class, () -> JSON.readValue("{\"type\":\"NoOp\",\"learningRate\":0.1}",
                IUpdater.class));
        assertTrue(e.getMessage().contains("learningRate"), e.getMessage());
        e = assertThrows(Exception.class, () -> JSON.readValue("{\"type\":\"Adagrad\"}", IUpdater.class));
        assertTrue(e.getMessage().contains("Adagrad"), e.getMessage());
    }

    @Test
    void defaultsAreTheReferences() {
        assertEquals(1e-3, new Sgd().getLearningRate());
        for (IUpdater u : List.of(new Adam(), new AdaMax(), new Nadam(), new AMSGrad())) {
            assertEquals(u, u instanceof Adam ? new Adam(1e-3, 0.9, 0.999, 1e-8)
                    : u instanceof AdaMax ? new AdaMax(1e-3, 0.9, 0.999, 1e-8)
                    : u instanceof Nadam ? new Nadam(1e-3, 0.9, 0.999, 1e-8) : new AMSGrad(1e-3, 0.9, 0.999, 1e-8));
        }
        assertEquals(new RmsProp(0.1, 0.95, 1e-8), new RmsProp());
        assertEquals(new Nesterovs(0.1, 0.9), new Nesterovs());
        assertEquals(new AdaGrad(0.1, 1e-6), new AdaGrad());
        assertEquals(new AdaDelta(0.95, 1e-6), new AdaDelta());
        assertEquals(new Adam(), Adam.builder().build());
        assertEquals(new Nesterovs(), Nesterovs.builder().build());
        assertEquals(new RmsProp(), RmsProp.builder().build());
        assertEquals(new AdaGrad(), AdaGrad.builder().build());
        assertEquals(new AdaDelta(), AdaDelta.builder().build());
        assertEquals(new Sgd(), Sgd.builder().build());
    }

    @Test
    void stateSizes() {
        int[] expected = {0, 2, 2, 2, 3, 1, 1, 1, 2, 0};
        List<Object[]> all = everyUpdater();
        for (int i = 0; i < expected.length; i++) {
            IUpdater u = (IUpdater) all.get(i)[0];
            assertEquals(expected[i], u.stateSizePerParam(), u.toString());
            assertEquals(expected[i] * 7L, u.stateSize(7));
        }
    }

    @Test
    void learningRateWithAndWithoutSchedule() {
        ISchedule byEpoch = new ExponentialSchedule(ScheduleType.EPOCH, 0.1, 0.5);
        for (IUpdater u : List.of(new Sgd(byEpoch), new Adam(byEpoch), new AdaMax(byEpoch), new Nadam(byEpoch),
                new AMSGrad(byEpoch), new RmsProp(byEpoch), new Nesterovs(byEpoch), new AdaGrad(byEpoch))) {
            assertTrue(u.hasLearningRate());
            assertEquals(byEpoch, u.getLearningRateSchedule());
            assertEquals(0.1, u.getLearningRate(5, 0), 1e-15);
            assertEquals(0.025, u.getLearningRate(6, 2), 1e-15);
            u.setLrAndSchedule(0.3, null);
            assertNull(u.getLearningRateSchedule());
            assertEquals(0.3, u.getLearningRate(6, 2));
            assertEquals(0.3, u.getLearningRate());
        }
        for (IUpdater u : List.of(new AdaDelta(), new NoOp())) {
            assertFalse(u.hasLearningRate());
            assertTrue(Double.isNaN(u.getLearningRate()));
            assertTrue(Double.isNaN(u.getLearningRate(3, 1)));
            assertThrows(UnsupportedOperationException.class, () -> u.setLearningRate(0.1));
            assertThrows(UnsupportedOperationException.class, () -> u.setLrAndSchedule(0.1, null));
        }
        Nesterovs n = new Nesterovs(0.1, map());
        assertEquals(0.9, n.currentMomentum(100, 9));
        assertEquals(0.5, n.currentMomentum(0, 10));
        assertEquals(0.7, new Nesterovs(0.1, 0.7).currentMomentum(4, 4));
        Nesterovs both = new Nesterovs(step(), map());
        assertEquals(step(), both.getLearningRateSchedule());
        assertEquals(map(), both.getMomentumSchedule());
    }

    @Test
    void cloneIsIndependent() {
        Adam a = new Adam(step(), 0.8, 0.99, 1e-6);
        Adam c = a.clone();
        c.setBeta1(0.5);
        c.setLearningRateSchedule(null);
        assertEquals(0.8, a.getBeta1());
        assertEquals(step(), a.getLearningRateSchedule());
        assertNotEquals(a, c);
        Nesterovs n = Nesterovs.builder().momentumSchedule(map()).build();
        Nesterovs nc = n.clone();
        nc.setMomentum(0.1);
        assertNotEquals(n, nc);
        assertEquals(map(), nc.getMomentumSchedule());
    }

    @Test
    void validationNamesFieldAndValue() {
        assertEquals("beta1 must be in [0, 1), got 1.5", new Adam(1e-3, 1.5, 0.999, 1e-8).validate());
        assertEquals("beta2 must be in [0, 1), got 1.0", new Nadam(1e-3, 0.9, 1.0, 1e-8).validate());
        assertEquals("learningRate must be finite and >= 0, got -0.1", new Sgd(-0.1).validate());
        assertEquals("learningRate must be finite and >= 0, got NaN", new AdaMax(Double.NaN).validate());
        assertEquals("epsilon must be finite and > 0, got 0.0", new AMSGrad(1e-3, 0.9, 0.999, 0).validate());
        assertEquals("rmsDecay must be in [0, 1), got -0.5", new RmsProp(0.1, -0.5, 1e-8).validate());
        assertEquals("momentum must be in [0, 1), got 1.0", new Nesterovs(0.1, 1.0).validate());
        assertEquals("epsilon must be finite and > 0, got -1.0E-6", new AdaGrad(0.1, -1e-6).validate());
        assertEquals("rho must be in [0, 1), got 1.2", new AdaDelta(1.2, 1e-6).validate());
        assertEquals("momentumSchedule.values[2] must be in [0, 1), got 1.5", new Nesterovs(0.1,
                new MapSchedule.Builder(ScheduleType.EPOCH).add(0, 0.5).add(2, 1.5).build()).validate());
        assertEquals("momentumSchedule.initialValue must be in [0, 1), got 1.0",
                new Nesterovs(0.1, new ExponentialSchedule(ScheduleType.EPOCH, 1.0, 0.5)).validate());
        assertNull(new NoOp().validate());
    }

    @Test
    void buildersRefuseInvalidValuesWithIllegalArgumentException() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Adam.builder().beta1(1.5).build());
        assertEquals("Adam: beta1 must be in [0, 1), got 1.5", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Sgd.builder().learningRate(-1).build());
        assertEquals("Sgd: learningRate must be finite and >= 0, got -1.0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AdaMax.builder().epsilon(0).build());
        assertEquals("AdaMax: epsilon must be finite and > 0, got 0.0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Nadam.builder().beta2(-0.1).build());
        assertEquals("Nadam: beta2 must be in [0, 1), got -0.1", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> AMSGrad.builder().learningRate(Double.POSITIVE_INFINITY).build());
        assertEquals("AMSGrad: learningRate must be finite and >= 0, got Infinity", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RmsProp.builder().rmsDecay(1).build());
        assertEquals("RmsProp: rmsDecay must be in [0, 1), got 1.0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Nesterovs.builder().momentum(2).build());
        assertEquals("Nesterovs: momentum must be in [0, 1), got 2.0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AdaGrad.builder().epsilon(Double.NaN).build());
        assertEquals("AdaGrad: epsilon must be finite and > 0, got NaN", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AdaDelta.builder().rho(-1).build());
        assertEquals("AdaDelta: rho must be in [0, 1), got -1.0", e.getMessage());
    }
}
