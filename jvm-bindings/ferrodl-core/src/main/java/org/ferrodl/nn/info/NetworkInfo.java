package org.ferrodl.nn.info;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * The engine's description of one native network, parsed once per handle: its layers (the
 * {@code layerInfo} JSON of a MultiLayerNetwork, or the vertices of a graph's {@code vertexInfo}
 * JSON) and its parameter blocks (the {@code paramTable} JSON), with each block attached to the
 * layer that owns it. Shared by the network types for {@code paramTable()}, {@code getLayer(..)}
 * and {@code summary()}; an internal class, not a user API.
 */
public final class NetworkInfo {
    /** The layers in engine order. */
    public final List<LayerEntry> layers;
    /** The parameter blocks in the layout order of the flat parameter vector. */
    public final List<ParamEntry> params;
    /** The parameter blocks by key. */
    public final Map<String, ParamEntry> byKey;
    /** A graph's network inputs (name and values per example), in order; empty for a MultiLayerNetwork. */
    public final List<GraphPort> graphInputs;
    /** A graph's network outputs (name and values per example), in order; empty for a MultiLayerNetwork. */
    public final List<GraphPort> graphOutputs;
    /** A graph's vertex names in execution (topological) order; empty for a MultiLayerNetwork. */
    public final List<String> executionOrder;

    /** A graph's network input or output: its name and its number of values per example. */
    public static final class GraphPort {
        public final String name;
        public final long width;

        GraphPort(String name, long width) {
            this.name = name;
            this.width = width;
        }
    }

    /** One parameter block: key {@code "<owner>_<name>"}, position in the flat vector, shape. */
    public static final class ParamEntry {
        /** The reference's key, e.g. {@code "0_W"} or {@code "dense1_b"}. */
        public final String key;
        /** The owning layer: its index in a MultiLayerNetwork, its vertex name in a graph. */
        public final String owner;
        /** The parameter's name within its layer ({@code W}, {@code b}, {@code gamma}, ...). */
        public final String name;
        /** First position in the flat parameter vector. */
        public final int offset;
        /** Number of values. */
        public final int length;
        /** The reference's shape: rank-1 blocks become row vectors {@code [1, n]}. */
        public final long[] shape;

        ParamEntry(String key, int offset, int length, long[] engineShape) {
            this.key = key;
            // Parameter names never contain '_'; layer and vertex names may.
            int cut = key.lastIndexOf('_');
            if (cut <= 0 || cut == key.length() - 1) {
                throw new IllegalArgumentException("parameter key \"" + key + "\" is not <layer>_<name>");
            }
            this.owner = key.substring(0, cut);
            this.name = key.substring(cut + 1);
            this.offset = offset;
            this.length = length;
            this.shape = engineShape.length == 1 ? new long[] {1, engineShape[0]} : engineShape.clone();
        }

        /**
         * @param flat the whole flat parameter vector
         * @return a copy of this block, shaped as {@link #shape}
         */
        public INDArray slice(float[] flat) {
            return new NDArray(Arrays.copyOfRange(flat, offset, offset + length), shape);
        }
    }

    /** What the engine reports about one layer. */
    public static final class LayerEntry {
        public final int index;
        public final String type;
        /** The wrapped layer's type for a frozen layer, else {@link #type}. */
        public final String innerType;
        /** The configured name, or null. */
        public final String name;
        public final boolean frozen;
        public final Long nIn;
        public final Long nOut;
        /** Per-example input shape (a graph vertex's first input). */
        public final long[] inputShape;
        /** A graph vertex's per-example input shapes, one per input; null in a MultiLayerNetwork. */
        public final List<long[]> inputShapes;
        /** Per-example output shape. */
        public final long[] outputShape;
        public final long numParams;
        public final String activation;
        public final String lossFunction;
        public final String outputActivation;
        /** A graph vertex's input names (network inputs or vertices), in order; null in a MultiLayerNetwork. */
        public final List<String> inputs;
        /** A graph vertex's kind ({@code LayerVertex}, {@code MergeVertex}, ...); null in a MultiLayerNetwork. */
        public final String vertexType;
        private final List<ParamEntry> paramList = new ArrayList<>();
        /** This layer's parameter blocks, in layout order (read-only). */
        public final List<ParamEntry> params = Collections.unmodifiableList(paramList);

        LayerEntry(JsonNode n) {
            index = n.get("index").asInt();
            type = n.get("type").asText();
            innerType = n.get("innerType").asText();
            name = n.get("name").isNull() ? null : n.get("name").asText();
            frozen = n.get("frozen").asBoolean();
            nIn = n.get("nIn").isNull() ? null : n.get("nIn").asLong();
            nOut = n.get("nOut").isNull() ? null : n.get("nOut").asLong();
            inputShape = longs(n.get("inputShape"));
            outputShape = longs(n.get("outputShape"));
            numParams = n.get("numParams").asLong();
            activation = text(n.get("activation"));
            lossFunction = text(n.get("lossFunction"));
            outputActivation = text(n.get("outputActivation"));
            inputs = null;
            vertexType = null;
            inputShapes = null;
        }

        /**
         * A graph vertex ({@code vertexInfo}'s {@code vertices} entry); {@code out} is its entry in
         * {@code outputs} when the vertex is a network output, else null. The input shape is the
         * first input's (all of them are listed by {@link #inputs}).
         */
        LayerEntry(int index, JsonNode n, JsonNode out) {
            this.index = index;
            vertexType = n.get("vertexType").asText();
            frozen = n.get("frozen").asBoolean();
            innerType = n.get("type").asText();
            type = frozen ? "FrozenVertex" : innerType;
            name = n.get("name").asText();
            nIn = n.get("nIn").isNull() ? null : n.get("nIn").asLong();
            nOut = n.get("nOut").isNull() ? null : n.get("nOut").asLong();
            JsonNode ins = n.get("inputShapes");
            inputShape = ins.size() == 0 ? new long[0] : longs(ins.get(0));
            List<long[]> shapes = new ArrayList<>();
            for (JsonNode sh : ins) {
                shapes.add(longs(sh));
            }
            inputShapes = Collections.unmodifiableList(shapes);
            outputShape = n.get("outputShape").isNull() ? new long[0] : longs(n.get("outputShape"));
            numParams = n.get("numParams").asLong();
            activation = text(n.get("activation"));
            lossFunction = out == null ? null : text(out.get("lossFunction"));
            outputActivation = out == null ? null : text(out.get("activation"));
            List<String> in = new ArrayList<>();
            for (JsonNode i : n.get("inputs")) {
                in.add(i.asText());
            }
            inputs = Collections.unmodifiableList(in);
        }

        /** @return the configured name, or {@code "layer" + index} */
        public String displayName() {
            return name != null ? name : "layer" + index;
        }

        private static String text(JsonNode n) {
            return n == null || n.isNull() ? null : n.asText();
        }
    }

    private static long[] longs(JsonNode a) {
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asLong();
        }
        return out;
    }

    /**
     * @param layerJson the engine's layer table (a JSON array of layer objects)
     * @param paramJson the engine's parameter table (a JSON array of {key, offset, length, shape})
     * @throws NativeStateException when either cannot be read
     */
    public NetworkInfo(String layerJson, String paramJson) {
        this(layerJson, paramJson, false);
    }

    /**
     * @param graphJson a graph's {@code vertexInfo} JSON (inputs, outputs, order, vertices)
     * @param paramJson its parameter table
     * @return the graph's description: one {@link LayerEntry} per vertex in configuration order
     * @throws NativeStateException when either cannot be read
     */
    public static NetworkInfo ofGraph(String graphJson, String paramJson) {
        return new NetworkInfo(graphJson, paramJson, true);
    }

    private NetworkInfo(String json, String paramJson, boolean graph) {
        List<LayerEntry> ls = new ArrayList<>();
        List<ParamEntry> ps = new ArrayList<>();
        Map<String, ParamEntry> keys = new LinkedHashMap<>();
        List<GraphPort> ins = new ArrayList<>();
        List<GraphPort> outs = new ArrayList<>();
        List<String> order = new ArrayList<>();
        ObjectMapper m = new ObjectMapper();
        try {
            JsonNode root = m.readTree(json);
            if (graph) {
                Map<String, JsonNode> outputByName = new LinkedHashMap<>();
                for (JsonNode o : root.get("outputs")) {
                    outputByName.put(o.get("name").asText(), o);
                    outs.add(new GraphPort(o.get("name").asText(), o.get("nOut").asLong()));
                }
                for (JsonNode i : root.get("inputs")) {
                    ins.add(new GraphPort(i.get("name").asText(), i.get("width").asLong()));
                }
                for (JsonNode v : root.get("order")) {
                    order.add(v.asText());
                }
                for (JsonNode n : root.get("vertices")) {
                    ls.add(new LayerEntry(ls.size(), n, outputByName.get(n.get("name").asText())));
                }
            } else {
                for (JsonNode n : root) {
                    ls.add(new LayerEntry(n));
                }
            }
            for (JsonNode n : m.readTree(paramJson)) {
                ParamEntry e = new ParamEntry(n.get("key").asText(), n.get("offset").asInt(), n.get("length").asInt(),
                        longs(n.get("shape")));
                ps.add(e);
                keys.put(e.key, e);
                ownerOf(ls, e, graph).paramList.add(e);
            }
        } catch (JsonProcessingException | RuntimeException e) {
            throw new NativeStateException("cannot read the native layer/parameter tables: " + e.getMessage());
        }
        this.layers = Collections.unmodifiableList(ls);
        this.params = Collections.unmodifiableList(ps);
        this.byKey = Collections.unmodifiableMap(keys);
        this.graphInputs = Collections.unmodifiableList(ins);
        this.graphOutputs = Collections.unmodifiableList(outs);
        this.executionOrder = Collections.unmodifiableList(order);
    }

    /** The layer a block belongs to: by index (a MultiLayerNetwork's keys), else (and always in a graph) by name. */
    private static LayerEntry ownerOf(List<LayerEntry> ls, ParamEntry e, boolean graph) {
        if (!graph && e.owner.chars().allMatch(Character::isDigit)) {
            int i = Integer.parseInt(e.owner);
            if (i < ls.size() && ls.get(i).index == i) {
                return ls.get(i);
            }
        }
        for (LayerEntry l : ls) {
            if (l.displayName().equals(e.owner)) {
                return l;
            }
        }
        throw new IllegalArgumentException("parameter " + e.key + " belongs to no layer");
    }
}
