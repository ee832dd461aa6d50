package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.junit.jupiter.api.Test;

/** The graph JNI surface: two inputs, two outputs, masks, per-vertex activations, errors. */
class NativeGraphTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** a(3) -> da(4); b(2) -> db(4); add -> cls (softmax 2) ; merge(add, b) -> reg (identity 1). */
    private static final String CONF = "{\"formatVersion\":1,\"seed\":5,\"networkInputs\":[\"a\",\"b\"],"
            + "\"networkOutputs\":[\"cls\",\"reg\"],\"vertices\":["
            + "{\"name\":\"da\",\"inputs\":[\"a\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
            + "{\"type\":\"DenseLayer\",\"nIn\":3,\"nOut\":4,\"activation\":\"TANH\",\"updater\":{\"type\":\"Sgd\",\"learningRate\":0.1}}}},"
            + "{\"name\":\"db\",\"inputs\":[\"b\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
            + "{\"type\":\"DenseLayer\",\"nIn\":2,\"nOut\":4,\"activation\":\"TANH\",\"updater\":{\"type\":\"Sgd\",\"learningRate\":0.1}}}},"
            + "{\"name\":\"add\",\"inputs\":[\"da\",\"db\"],\"vertex\":{\"type\":\"ElementWiseVertex\",\"op\":\"Add\"}},"
            + "{\"name\":\"cls\",\"inputs\":[\"add\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
            + "{\"type\":\"OutputLayer\",\"nIn\":4,\"nOut\":2,\"activation\":\"SOFTMAX\",\"updater\":{\"type\":\"Sgd\",\"learningRate\":0.1}}}},"
            + "{\"name\":\"m\",\"inputs\":[\"add\",\"b\"],\"vertex\":{\"type\":\"MergeVertex\"}},"
            + "{\"name\":\"reg\",\"inputs\":[\"m\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
            + "{\"type\":\"OutputLayer\",\"nIn\":6,\"nOut\":1,\"activation\":\"IDENTITY\",\"lossFunction\":\"MSE\","
            + "\"updater\":{\"type\":\"Sgd\",\"learningRate\":0.1}}}}]}";

    private static final float[][] X = {
        {0.1f, -0.4f, 0.9f, 0.5f, 0.2f, -0.3f}, // a: 2 rows x 3
        {1.0f, -1.0f, 0.5f, 0.25f}, // b: 2 rows x 2
    };
    private static final float[][] Y = {{1, 0, 0, 1}, {0.5f, -0.5f}};

    @Test
    void fitsAndPredictsWithTwoInputsAndTwoOutputs() throws Exception {
        long h = NativeGraph.create(CONF);
        try {
            assertEquals(3 * 4 + 4 + 2 * 4 + 4 + 4 * 2 + 2 + 6 + 1, NativeGraph.numParams(h));
            double first = NativeGraph.score(h, X, Y, 2, null, null, null, null);
            for (int i = 0; i < 30; i++) {
                NativeGraph.fit(h, X, Y, 2, null, null, null, null);
            }
            double after = NativeGraph.score(h, X, Y, 2, null, null, null, null);
            assertTrue(after < first * 0.5, first + " -> " + after);
            assertArrayEquals(new long[] {30, 0}, NativeGraph.counters(h));
            float[][] out = NativeGraph.output(h, X, 2, false, null, null);
            assertEquals(2, out.length);
            assertEquals(4, out[0].length);
            assertEquals(2, out[1].length);
            assertEquals(1.0, out[0][0] + out[0][1], 1e-6);
            float[][] ff = NativeGraph.feedForward(h, X, 2, false, null, null);
            assertEquals(6, ff.length);
            assertEquals(2 * 6, ff[4].length); // the merge vertex: 4 + 2 per row
            assertArrayEquals(out[1], ff[5]);
            double[] per = NativeGraph.scoreExamples(h, X, Y, 2, null, null, null, null, false);
            assertEquals(after, (per[0] + per[1]) / 2, 1e-6);
            // A per-example labels mask on the first output only: example 1's classification loss
            // no longer counts.
            float[][] lm = {{1, 0}, null};
            double[] masked = NativeGraph.scoreExamples(h, X, Y, 2, null, null, lm, new int[] {1, 0}, false);
            assertEquals(per[0], masked[0], 1e-9);
            assertTrue(masked[1] < per[1]);
            JsonNode table = JSON.readTree(NativeGraph.paramTable(h));
            assertEquals("da_W", table.get(0).get("key").asText());
            JsonNode info = JSON.readTree(NativeGraph.vertexInfo(h));
            assertEquals("ElementWiseVertex", info.get("vertices").get(2).get("type").asText());
            assertEquals("MSE", info.get("outputs").get(1).get("lossFunction").asText());
            assertEquals(0.1, NativeGraph.learningRate(h, "da"), 1e-12);
            assertTrue(Double.isNaN(NativeGraph.learningRate(h, "add")));
        } finally {
            NativeGraph.destroy(h);
        }
    }

    @Test
    void badCallsAreExceptionsNamingTheInputOrOutput() {
        long h = NativeGraph.create(CONF);
        try {
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> NativeGraph.fit(h, new float[][] {X[0]}, Y, 2, null, null, null, null));
            assertTrue(e.getMessage().contains("2 network inputs"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class,
                    () -> NativeGraph.fit(h, X, new float[][] {Y[0], {1, 2, 3}}, 2, null, null, null, null));
            assertTrue(e.getMessage().startsWith("labels for output \"reg\" have 3 values"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class,
                    () -> NativeGraph.fit(h, new float[][] {X[0], null}, Y, 2, null, null, null, null));
            assertEquals("features[1] is null", e.getMessage());
            assertThrows(DL4JInvalidInputException.class,
                    () -> NativeGraph.output(h, X, 2, false, new float[][] {null, null}, new int[] {1}));
            assertThrows(DL4JInvalidInputException.class, () -> NativeGraph.learningRate(h, "nope"));
        } finally {
            NativeGraph.destroy(h);
        }
        assertThrows(NativeStateException.class, () -> NativeGraph.numParams(h));
    }
}
