package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.junit.jupiter.api.Test;

/** The engine's configuration rules through JNI: nIn inference, graph checks, type reports. */
class NativeConfigurationTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void resolveMultiLayerInfersEveryUnsetNIn() throws Exception {
        String conf = "{\"formatVersion\":1,\"seed\":1,"
                + "\"inputType\":{\"type\":\"convolutionalFlat\",\"height\":8,\"width\":8,\"depth\":3},"
                + "\"layers\":[{\"type\":\"ConvolutionLayer\",\"nIn\":null,\"nOut\":4,\"kernelSize\":[3,3]},"
                + "{\"type\":\"DenseLayer\",\"nOut\":5},{\"type\":\"OutputLayer\",\"nOut\":2}]}";
        JsonNode layers = JSON.readTree(NativeConfiguration.resolveMultiLayer(conf)).get("layers");
        assertEquals(3, layers.get(0).get("nIn").asInt());
        assertEquals(4 * 6 * 6, layers.get(1).get("nIn").asInt());
        assertEquals(5, layers.get(2).get("nIn").asInt());
        JsonNode types = JSON.readTree(NativeConfiguration.multiLayerTypes(NativeConfiguration.resolveMultiLayer(conf)));
        assertEquals("convolutional", types.get(0).get("outputType").get("type").asText());
        assertEquals(6, types.get(0).get("outputType").get("height").asInt());
        assertEquals(4 * 3 * 3 * 3 + 4, types.get(0).get("numParams").asInt());
    }

    @Test
    void resolveGraphNamesTheVertexOfABadGraph() {
        String cyclic = "{\"formatVersion\":1,\"seed\":1,\"networkInputs\":[\"in\"],\"networkOutputs\":[\"out\"],"
                + "\"vertices\":["
                + "{\"name\":\"m\",\"inputs\":[\"in\",\"b\"],\"vertex\":{\"type\":\"MergeVertex\"}},"
                + "{\"name\":\"b\",\"inputs\":[\"m\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
                + "{\"type\":\"DenseLayer\",\"nIn\":4,\"nOut\":2}}},"
                + "{\"name\":\"out\",\"inputs\":[\"b\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
                + "{\"type\":\"OutputLayer\",\"nIn\":2,\"nOut\":2}}}]}";
        DL4JInvalidConfigException e =
                assertThrows(DL4JInvalidConfigException.class, () -> NativeConfiguration.resolveGraph(cyclic));
        assertTrue(e.getMessage().startsWith("the graph has a cycle: \"m\" -> \"b\" -> \"m\""), e.getMessage());
    }

    @Test
    void resolveGraphInfersNInAndReportsTypes() throws Exception {
        String g = "{\"formatVersion\":1,\"seed\":1,\"networkInputs\":[\"a\",\"b\"],\"networkOutputs\":[\"out\"],"
                + "\"inputTypes\":[{\"type\":\"feedForward\",\"size\":3},{\"type\":\"feedForward\",\"size\":5}],"
                + "\"vertices\":["
                + "{\"name\":\"m\",\"inputs\":[\"a\",\"b\"],\"vertex\":{\"type\":\"MergeVertex\"}},"
                + "{\"name\":\"out\",\"inputs\":[\"m\"],\"vertex\":{\"type\":\"LayerVertex\",\"layer\":"
                + "{\"type\":\"OutputLayer\",\"nOut\":2,\"activation\":\"SOFTMAX\"}}}]}";
        String resolved = NativeConfiguration.resolveGraph(g);
        assertEquals(8, JSON.readTree(resolved).get("vertices").get(1).get("vertex").get("layer").get("nIn").asInt());
        JsonNode types = JSON.readTree(NativeConfiguration.graphTypes(resolved));
        assertEquals("[\"m\",\"out\"]", types.get("order").toString());
        assertEquals(8, types.get("vertices").get(0).get("outputType").get("size").asInt());
        assertEquals(18, types.get("vertices").get(1).get("numParams").asInt());
    }

    @Test
    void nullAndMalformedJsonAreClearErrors() {
        assertThrows(DL4JInvalidInputException.class, () -> NativeConfiguration.resolveGraph(null));
        DL4JInvalidConfigException e =
                assertThrows(DL4JInvalidConfigException.class, () -> NativeConfiguration.resolveMultiLayer("{"));
        assertTrue(e.getMessage().startsWith("invalid configuration JSON"), e.getMessage());
    }
}
