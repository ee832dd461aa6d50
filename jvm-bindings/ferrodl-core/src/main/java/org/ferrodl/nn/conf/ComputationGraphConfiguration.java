package org.ferrodl.nn.conf;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.jni.NativeConfiguration;
import org.ferrodl.nn.conf.graph.FrozenVertex;
import org.ferrodl.nn.conf.graph.GraphVertex;
import org.ferrodl.nn.conf.graph.LayerVertex;
import org.ferrodl.nn.conf.graph.MergeVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.serde.JsonMappers;

/**
 * The configuration of a computation graph: named network inputs, named vertices (layers and
 * operations such as {@link MergeVertex}) each with the names of its inputs, and the names of the
 * network outputs (output or loss layers). Build one with
 * {@code new NeuralNetConfiguration.Builder()...graphBuilder()}:
 *
 * <pre>{@code
 * ComputationGraphConfiguration conf = new NeuralNetConfiguration.Builder()
 *     .seed(42).updater(new Adam(1e-3)).activation(Activation.RELU)
 *     .graphBuilder()
 *     .addInputs("in")
 *     .addLayer("d1", new DenseLayer.Builder().nIn(784).nOut(100).build(), "in")
 *     .addLayer("d2", new DenseLayer.Builder().nOut(100).build(), "d1")
 *     .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "d1", "d2")
 *     .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(10)
 *         .activation(Activation.SOFTMAX).build(), "add")
 *     .setOutputs("out")
 *     .build();
 * }</pre>
 *
 * <p>Its JSON form ({@link #toJson()}) is the exact document the native engine parses
 * (docs/ARCHITECTURE.md §2.4): vertices are an array in the order they were added. Global builder
 * values are resolved into every layer by {@code build()}, as for a {@link MultiLayerConfiguration}.
 *
 * <p>Mutable (counters) and not thread-safe.
 */
public class ComputationGraphConfiguration implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** The JSON format version written and accepted. */
    public static final int FORMAT_VERSION = 1;

    private long seed;
    private boolean miniBatch = true;
    private BackpropType backpropType = BackpropType.Standard;
    private int tbpttFwdLength = TbpttSettings.DEFAULT_LENGTH;
    private int tbpttBackLength = TbpttSettings.DEFAULT_LENGTH;
    private int iterationCount;
    private int epochCount;
    private List<String> networkInputs = new ArrayList<>();
    private List<String> networkOutputs = new ArrayList<>();
    private List<InputType> networkInputTypes;
    private LinkedHashMap<String, GraphVertex> vertices = new LinkedHashMap<>();
    private LinkedHashMap<String, List<String>> vertexInputs = new LinkedHashMap<>();

    /**
     * Creates a configuration from resolved vertices; prefer {@link GraphBuilder}.
     *
     * @param seed seed of parameter initialization
     * @param miniBatch minibatch mode
     * @param networkInputs names of the network inputs, in order
     * @param networkOutputs names of the output vertices, in order
     * @param networkInputTypes one input type per network input, or null
     * @param vertices the vertices by name, in insertion order (copied)
     * @param vertexInputs each vertex's input names (copied)
     */
    public ComputationGraphConfiguration(long seed, boolean miniBatch, List<String> networkInputs,
                                         List<String> networkOutputs, List<InputType> networkInputTypes,
                                         Map<String, GraphVertex> vertices, Map<String, List<String>> vertexInputs) {
        this.seed = seed;
        this.miniBatch = miniBatch;
        this.networkInputs = new ArrayList<>(networkInputs);
        this.networkOutputs = new ArrayList<>(networkOutputs);
        this.networkInputTypes = networkInputTypes == null ? null : new ArrayList<>(networkInputTypes);
        this.vertices = new LinkedHashMap<>(vertices);
        this.vertexInputs = new LinkedHashMap<>();
        for (String name : vertices.keySet()) {
            List<String> in = vertexInputs.get(name);
            this.vertexInputs.put(name, in == null ? new ArrayList<>() : new ArrayList<>(in));
        }
    }

    /** For deserialization. */
    protected ComputationGraphConfiguration() {
    }

    /** @return the seed of parameter initialization */
    public long getSeed() {
        return seed;
    }

    /** @return whether the score is averaged over each minibatch */
    public boolean isMiniBatch() {
        return miniBatch;
    }

    /** @return how recurrent layers are trained: Standard (default) or TruncatedBPTT */
    public BackpropType getBackpropType() {
        return backpropType;
    }

    /** @param backpropType how recurrent layers are trained */
    public void setBackpropType(BackpropType backpropType) {
        this.backpropType = backpropType;
    }

    /** @return the truncated BPTT forward length: time steps per segment (default 20) */
    public int getTbpttFwdLength() {
        return tbpttFwdLength;
    }

    /** @param tbpttFwdLength the truncated BPTT forward length */
    public void setTbpttFwdLength(int tbpttFwdLength) {
        this.tbpttFwdLength = tbpttFwdLength;
    }

    /** @return the truncated BPTT backward length: time steps backpropagated per segment (default 20) */
    public int getTbpttBackLength() {
        return tbpttBackLength;
    }

    /** @param tbpttBackLength the truncated BPTT backward length */
    public void setTbpttBackLength(int tbpttBackLength) {
        this.tbpttBackLength = tbpttBackLength;
    }

    /** @return the number of training iterations done so far */
    public int getIterationCount() {
        return iterationCount;
    }

    /** @param iterationCount the iteration counter */
    public void setIterationCount(int iterationCount) {
        this.iterationCount = iterationCount;
    }

    /** @return the number of training epochs done so far */
    public int getEpochCount() {
        return epochCount;
    }

    /** @param epochCount the epoch counter */
    public void setEpochCount(int epochCount) {
        this.epochCount = epochCount;
    }

    /** @return the names of the network inputs, in order (read-only) */
    public List<String> getNetworkInputs() {
        return Collections.unmodifiableList(networkInputs);
    }

    /** @return the names of the network outputs, in order (read-only) */
    public List<String> getNetworkOutputs() {
        return Collections.unmodifiableList(networkOutputs);
    }

    /** @return the input types given to {@code setInputTypes(..)} (read-only), or null */
    public List<InputType> getNetworkInputTypes() {
        return networkInputTypes == null ? null : Collections.unmodifiableList(networkInputTypes);
    }

    /** @return the vertices by name, in the order they were added (read-only; the vertices are live) */
    public Map<String, GraphVertex> getVertices() {
        return Collections.unmodifiableMap(vertices);
    }

    /** @return each vertex's input names, in the order the vertices were added (read-only) */
    public Map<String, List<String>> getVertexInputs() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : vertexInputs.entrySet()) {
            out.put(e.getKey(), Collections.unmodifiableList(e.getValue()));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * The per-layer configuration of a layer vertex (frozen or not).
     *
     * @param vertexName a layer vertex's name
     * @return its configuration with this graph's seed and minibatch mode
     * @throws IllegalArgumentException when there is no such layer vertex
     */
    public NeuralNetConfiguration getConf(String vertexName) {
        Layer l = layerOf(vertices.get(vertexName));
        if (l == null) {
            throw new IllegalArgumentException("no layer vertex named \"" + vertexName + "\"; the layer vertices are "
                    + layerNames());
        }
        return new NeuralNetConfiguration(seed, miniBatch, l);
    }

    private List<String> layerNames() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, GraphVertex> e : vertices.entrySet()) {
            if (layerOf(e.getValue()) != null) {
                out.add(e.getKey());
            }
        }
        return out;
    }

    /** The layer of a (possibly frozen) layer vertex, else null. */
    static Layer layerOf(GraphVertex v) {
        if (v instanceof FrozenVertex) {
            return layerOf(((FrozenVertex) v).getUnderlying());
        }
        return v instanceof LayerVertex ? ((LayerVertex) v).getLayer() : null;
    }

    // ---- validation and types (the engine's rules) ---------------------------------------------

    /**
     * Checks the whole graph with the engine: names, connections, cycles, network outputs that are
     * output or loss layers, every vertex's input count and shape rule, every layer's settings.
     *
     * @throws DL4JInvalidConfigException naming the vertex ({@code vertex "add" (ElementWiseVertex): ...})
     */
    public void validate() {
        if (iterationCount < 0 || epochCount < 0) {
            throw new DL4JInvalidConfigException("iterationCount and epochCount must be >= 0, got "
                    + iterationCount + " and " + epochCount);
        }
        TbpttSettings.check(backpropType, tbpttFwdLength, tbpttBackLength);
        NativeConfiguration.resolveGraph(toJson());
    }

    /** Asks the engine to validate and infer unset sizes, and copies the inferred sizes in. */
    void resolveWithEngine() {
        TbpttSettings.check(backpropType, tbpttFwdLength, tbpttBackLength);
        JsonNode resolved = EngineSizes.parse(NativeConfiguration.resolveGraph(toJson())).path("vertices");
        if (resolved.size() != vertices.size()) {
            throw new NativeStateException("the engine returned " + resolved.size() + " vertices for "
                    + vertices.size());
        }
        int i = 0;
        for (GraphVertex v : vertices.values()) {
            JsonNode ev = resolved.get(i++).path("vertex");
            while (ev.has("vertex")) {
                ev = ev.get("vertex");
            }
            Layer l = layerOf(v);
            if (l != null) {
                EngineSizes.copyInto(l, ev.path("layer"));
            }
        }
    }

    /**
     * The type of every network input and every vertex's output, for given network input types (the
     * reference's method; this configuration is not modified).
     *
     * @param inputTypes one input type per network input, in order
     * @return input and vertex names to their activation types, network inputs first, then vertices
     *     in the order they were added
     * @throws DL4JInvalidConfigException when the graph does not suit those inputs
     */
    public Map<String, InputType> getLayerActivationTypes(InputType... inputTypes) {
        ComputationGraphConfiguration c = clone();
        c.networkInputTypes = inputTypes == null ? null : new ArrayList<>(Arrays.asList(inputTypes));
        c.resolveWithEngine();
        JsonNode types = EngineSizes.parse(NativeConfiguration.graphTypes(c.toJson()));
        Map<String, InputType> out = new LinkedHashMap<>();
        try {
            for (JsonNode n : types.path("networkInputs")) {
                out.put(n.get("name").asText(), JsonMappers.getMapper().treeToValue(n.get("type"), InputType.class));
            }
            for (JsonNode n : types.path("vertices")) {
                out.put(n.get("name").asText(), JsonMappers.getMapper().treeToValue(n.get("outputType"),
                        InputType.class));
            }
        } catch (JsonProcessingException | RuntimeException e) {
            throw new NativeStateException("cannot read the engine's graph types: " + e.getMessage());
        }
        return out;
    }

    /**
     * @return the type of every network input and vertex output for this configuration's own
     *     input types ({@code setInputTypes(..)}), or for the sizes its layers declare
     * @see #getLayerActivationTypes(InputType...)
     */
    public Map<String, InputType> getLayerActivationTypes() {
        return getLayerActivationTypes(networkInputTypes == null ? null : networkInputTypes.toArray(new InputType[0]));
    }

    // ---- JSON / YAML --------------------------------------------------------------------------

    /** The serialized form (docs/ARCHITECTURE.md §2.4): vertices as an ordered array. */
    @JsonPropertyOrder({"formatVersion", "seed", "miniBatch", "iterationCount", "epochCount", "backpropType",
        "tbpttFwdLength", "tbpttBackLength", "networkInputs", "networkOutputs", "inputTypes", "vertices"})
    static final class Document {
        int formatVersion = FORMAT_VERSION;
        long seed;
        boolean miniBatch = true;
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = TbpttSettings.StandardBackprop.class)
        BackpropType backpropType = BackpropType.Standard;
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = TbpttSettings.DefaultLength.class)
        int tbpttFwdLength = TbpttSettings.DEFAULT_LENGTH;
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = TbpttSettings.DefaultLength.class)
        int tbpttBackLength = TbpttSettings.DEFAULT_LENGTH;
        int iterationCount;
        int epochCount;
        List<String> networkInputs;
        List<String> networkOutputs;
        List<InputType> inputTypes;
        List<VertexEntry> vertices;
    }

    /** One named vertex with its input names. */
    @JsonPropertyOrder({"name", "inputs", "vertex"})
    static final class VertexEntry {
        String name;
        List<String> inputs;
        GraphVertex vertex;
    }

    private Document toDocument() {
        Document d = new Document();
        d.seed = seed;
        d.miniBatch = miniBatch;
        d.backpropType = backpropType;
        d.tbpttFwdLength = tbpttFwdLength;
        d.tbpttBackLength = tbpttBackLength;
        d.iterationCount = iterationCount;
        d.epochCount = epochCount;
        d.networkInputs = networkInputs;
        d.networkOutputs = networkOutputs;
        d.inputTypes = networkInputTypes;
        d.vertices = new ArrayList<>(vertices.size());
        for (Map.Entry<String, GraphVertex> e : vertices.entrySet()) {
            VertexEntry v = new VertexEntry();
            v.name = e.getKey();
            v.inputs = vertexInputs.get(e.getKey());
            v.vertex = e.getValue();
            d.vertices.add(v);
        }
        return d;
    }

    /** @return the JSON form (docs/ARCHITECTURE.md §2.4) */
    public String toJson() {
        return write(JsonMappers.getMapper(), "JSON");
    }

    /** @return the YAML form: the same fields as {@link #toJson()} */
    public String toYaml() {
        return write(JsonMappers.getMapperYaml(), "YAML");
    }

    private String write(ObjectMapper m, String what) {
        try {
            return m.writeValueAsString(toDocument());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the graph configuration as " + what + ": " + e.getMessage(),
                    e);
        }
    }

    /**
     * @param json a document written by {@link #toJson()}
     * @return the configuration
     * @throws DL4JInvalidConfigException for malformed JSON, unknown fields, another format version,
     *     or an invalid graph (the engine's message names the vertex)
     */
    public static ComputationGraphConfiguration fromJson(String json) {
        return read(JsonMappers.getMapper(), json, "JSON");
    }

    /**
     * @param yaml a document written by {@link #toYaml()}
     * @return the configuration
     * @throws DL4JInvalidConfigException as {@link #fromJson(String)}
     */
    public static ComputationGraphConfiguration fromYaml(String yaml) {
        return read(JsonMappers.getMapperYaml(), yaml, "YAML");
    }

    private static ComputationGraphConfiguration read(ObjectMapper m, String text, String what) {
        Objects.requireNonNull(text, what);
        Document d;
        try {
            d = m.readValue(text, Document.class);
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid ComputationGraphConfiguration " + what + ": "
                    + e.getOriginalMessage(), e);
        }
        if (d == null) {
            throw new DL4JInvalidConfigException("invalid ComputationGraphConfiguration " + what + ": empty document");
        }
        if (d.formatVersion != FORMAT_VERSION) {
            throw new DL4JInvalidConfigException("unsupported ComputationGraphConfiguration formatVersion "
                    + d.formatVersion + " (this version of ferrodl reads formatVersion " + FORMAT_VERSION + ")");
        }
        String missing = d.networkInputs == null ? "networkInputs" : d.networkOutputs == null ? "networkOutputs"
                : d.vertices == null ? "vertices" : null;
        if (missing != null) {
            throw new DL4JInvalidConfigException("invalid ComputationGraphConfiguration " + what + ": no \"" + missing
                    + "\" list");
        }
        LinkedHashMap<String, GraphVertex> vs = new LinkedHashMap<>();
        LinkedHashMap<String, List<String>> ins = new LinkedHashMap<>();
        for (int i = 0; i < d.vertices.size(); i++) {
            VertexEntry e = d.vertices.get(i);
            if (e == null || e.name == null || e.vertex == null) {
                throw new DL4JInvalidConfigException("invalid ComputationGraphConfiguration " + what + ": vertex " + i
                        + " has no name or no vertex object");
            }
            // The in-memory form is a map by name: a repeated name cannot be represented.
            if (vs.containsKey(e.name)) {
                throw new DL4JInvalidConfigException("invalid ComputationGraphConfiguration " + what
                        + ": duplicate name \"" + e.name + "\": two vertices are called that");
            }
            vs.put(e.name, e.vertex);
            ins.put(e.name, e.inputs == null ? new ArrayList<>() : new ArrayList<>(e.inputs));
        }
        ComputationGraphConfiguration c = new ComputationGraphConfiguration(d.seed, d.miniBatch, d.networkInputs,
                d.networkOutputs, d.inputTypes, vs, ins);
        c.iterationCount = d.iterationCount;
        c.epochCount = d.epochCount;
        c.backpropType = d.backpropType;
        c.tbpttFwdLength = d.tbpttFwdLength;
        c.tbpttBackLength = d.tbpttBackLength;
        c.validate();
        return c;
    }

    @Override
    public ComputationGraphConfiguration clone() {
        ComputationGraphConfiguration c;
        try {
            c = (ComputationGraphConfiguration) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
        c.networkInputs = new ArrayList<>(networkInputs);
        c.networkOutputs = new ArrayList<>(networkOutputs);
        c.networkInputTypes = networkInputTypes == null ? null : new ArrayList<>(networkInputTypes);
        c.vertices = new LinkedHashMap<>();
        for (Map.Entry<String, GraphVertex> e : vertices.entrySet()) {
            c.vertices.put(e.getKey(), e.getValue().clone());
        }
        c.vertexInputs = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : vertexInputs.entrySet()) {
            c.vertexInputs.put(e.getKey(), new ArrayList<>(e.getValue()));
        }
        return c;
    }

    /** Equal settings, vertices, connections and vertex order. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ComputationGraphConfiguration)) {
            return false;
        }
        ComputationGraphConfiguration c = (ComputationGraphConfiguration) o;
        return seed == c.seed && miniBatch == c.miniBatch && iterationCount == c.iterationCount
                && epochCount == c.epochCount && backpropType == c.backpropType && tbpttFwdLength == c.tbpttFwdLength
                && tbpttBackLength == c.tbpttBackLength && networkInputs.equals(c.networkInputs)
                && networkOutputs.equals(c.networkOutputs) && Objects.equals(networkInputTypes, c.networkInputTypes)
                && new ArrayList<>(vertices.keySet()).equals(new ArrayList<>(c.vertices.keySet()))
                && vertices.equals(c.vertices) && vertexInputs.equals(c.vertexInputs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(seed, miniBatch, iterationCount, epochCount, backpropType, tbpttFwdLength, tbpttBackLength,
                networkInputs, networkOutputs,
                networkInputTypes, vertices, vertexInputs);
    }

    @Override
    public String toString() {
        return toJson();
    }

    // ---- builder ------------------------------------------------------------------------------

    /**
     * Builds a {@link ComputationGraphConfiguration}: obtained from
     * {@link NeuralNetConfiguration.Builder#graphBuilder()}, whose global settings every layer that
     * does not set its own value takes at {@link #build()}.
     *
     * <p>Names are checked as they are added (not null or empty, not used twice); everything about
     * the graph's structure and shapes (unknown inputs, cycles, outputs that are not loss layers,
     * shape mismatches) is checked by the engine at {@link #build()}, whose messages name the vertex.
     */
    public static class GraphBuilder {
        private final NeuralNetConfiguration.Builder globals;
        private final List<String> networkInputs = new ArrayList<>();
        private final List<String> networkOutputs = new ArrayList<>();
        private List<InputType> networkInputTypes;
        private final LinkedHashMap<String, GraphVertex> vertices = new LinkedHashMap<>();
        private final LinkedHashMap<String, List<String>> vertexInputs = new LinkedHashMap<>();
        private String lastAdded;
        private BackpropType backpropType = BackpropType.Standard;
        private int tbpttFwdLength = TbpttSettings.DEFAULT_LENGTH;
        private int tbpttBackLength = TbpttSettings.DEFAULT_LENGTH;

        /** @param globalConfiguration the global settings (copied) */
        public GraphBuilder(NeuralNetConfiguration.Builder globalConfiguration) {
            this.globals = Objects.requireNonNull(globalConfiguration, "globalConfiguration").clone();
        }

        private void checkNewName(String name, String what) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException(what + " name must not be null or empty");
            }
            if (vertices.containsKey(name)) {
                throw new IllegalArgumentException("the name \"" + name + "\" is already used by a vertex ("
                        + vertices.get(name).getClass().getSimpleName() + ")");
            }
            if (networkInputs.contains(name)) {
                throw new IllegalArgumentException("the name \"" + name + "\" is already used by a network input");
            }
        }

        private static List<String> names(String what, String... names) {
            if (names == null) {
                throw new IllegalArgumentException(what + " must not be null");
            }
            List<String> out = new ArrayList<>(names.length);
            for (String n : names) {
                if (n == null || n.isEmpty()) {
                    throw new IllegalArgumentException(what + " must not contain null or empty names: "
                            + Arrays.toString(names));
                }
                out.add(n);
            }
            return out;
        }

        /**
         * Adds network inputs, in order (the order of the features arrays given to the network).
         *
         * @param inputNames the names
         * @return this builder
         */
        public GraphBuilder addInputs(String... inputNames) {
            for (String n : names("input names", inputNames)) {
                checkNewName(n, "input");
                networkInputs.add(n);
            }
            return this;
        }

        /**
         * @param inputNames the names, in order
         * @return this builder
         */
        public GraphBuilder addInputs(Collection<String> inputNames) {
            return addInputs(Objects.requireNonNull(inputNames, "inputNames").toArray(new String[0]));
        }

        /**
         * The types of the network inputs, one per input in the order of {@link #addInputs}. The engine
         * infers every unset {@code nIn} from them at {@link #build()}.
         *
         * @param inputTypes the input types
         * @return this builder
         */
        public GraphBuilder setInputTypes(InputType... inputTypes) {
            if (inputTypes == null || Arrays.asList(inputTypes).contains(null)) {
                throw new IllegalArgumentException("input types must not be null: " + Arrays.toString(inputTypes));
            }
            this.networkInputTypes = new ArrayList<>(Arrays.asList(inputTypes));
            return this;
        }

        /**
         * Adds a layer. With several inputs, a {@link MergeVertex} named {@code layerName + "-merge"}
         * is added first and feeds the layer, as in the reference.
         *
         * @param layerName the vertex name (also the layer's name)
         * @param layer the layer configuration
         * @param layerInputs names of network inputs or vertices
         * @return this builder
         */
        public GraphBuilder addLayer(String layerName, Layer layer, String... layerInputs) {
            return addLayer(layerName, layer, null, layerInputs);
        }

        /**
         * Adds a layer whose input first goes through a preprocessor.
         *
         * @param layerName the vertex name (also the layer's name)
         * @param layer the layer configuration
         * @param preProcessor applied to the layer's input, or null
         * @param layerInputs names of network inputs or vertices
         * @return this builder
         */
        public GraphBuilder addLayer(String layerName, Layer layer, InputPreProcessor preProcessor,
                                     String... layerInputs) {
            checkNewName(layerName, "layer");
            Objects.requireNonNull(layer, "layer");
            List<String> in = names("inputs of layer \"" + layerName + "\"", layerInputs);
            if (in.size() > 1) {
                String merge = layerName + "-merge";
                addVertex(merge, new MergeVertex(), in.toArray(new String[0]));
                in = new ArrayList<>(List.of(merge));
            }
            vertices.put(layerName, new LayerVertex(layer, preProcessor));
            vertexInputs.put(layerName, in);
            lastAdded = layerName;
            return this;
        }

        /**
         * @param layerName the vertex name
         * @param layer the layer configuration
         * @param layerInputs input names
         * @return this builder
         * @see #addLayer(String, Layer, String...)
         */
        public GraphBuilder layer(String layerName, Layer layer, String... layerInputs) {
            return addLayer(layerName, layer, layerInputs);
        }

        /**
         * @param layerName the vertex name
         * @param layer the layer configuration
         * @param preProcessor applied to the layer's input, or null
         * @param layerInputs input names
         * @return this builder
         * @see #addLayer(String, Layer, InputPreProcessor, String...)
         */
        public GraphBuilder layer(String layerName, Layer layer, InputPreProcessor preProcessor,
                                  String... layerInputs) {
            return addLayer(layerName, layer, preProcessor, layerInputs);
        }

        /**
         * Adds a layer whose input is the vertex added last.
         *
         * @param layerName the vertex name
         * @param layer the layer configuration
         * @return this builder
         * @throws IllegalStateException when no layer or vertex was added before
         */
        public GraphBuilder appendLayer(String layerName, Layer layer) {
            return appendLayer(layerName, layer, null);
        }

        /**
         * Adds a layer, with a preprocessor, whose input is the vertex added last.
         *
         * @param layerName the vertex name
         * @param layer the layer configuration
         * @param preProcessor applied to the layer's input, or null
         * @return this builder
         * @throws IllegalStateException when no layer or vertex was added before
         */
        public GraphBuilder appendLayer(String layerName, Layer layer, InputPreProcessor preProcessor) {
            if (lastAdded == null) {
                throw new IllegalStateException("appendLayer(\"" + layerName + "\") needs a layer or vertex added"
                        + " before it; use addLayer(name, layer, inputs...) for the first one");
            }
            return addLayer(layerName, layer, preProcessor, lastAdded);
        }

        /**
         * Adds a vertex.
         *
         * @param vertexName the vertex name
         * @param vertex the vertex configuration
         * @param vertexInputs names of network inputs or vertices
         * @return this builder
         */
        public GraphBuilder addVertex(String vertexName, GraphVertex vertex, String... vertexInputs) {
            checkNewName(vertexName, "vertex");
            Objects.requireNonNull(vertex, "vertex");
            List<String> in = names("inputs of vertex \"" + vertexName + "\"", vertexInputs);
            vertices.put(vertexName, vertex);
            this.vertexInputs.put(vertexName, in);
            lastAdded = vertexName;
            return this;
        }

        /**
         * Adds a vertex whose input is the vertex added last.
         *
         * @param vertexName the vertex name
         * @param vertex the vertex configuration
         * @return this builder
         * @throws IllegalStateException when no layer or vertex was added before
         */
        public GraphBuilder appendVertex(String vertexName, GraphVertex vertex) {
            if (lastAdded == null) {
                throw new IllegalStateException("appendVertex(\"" + vertexName + "\") needs a layer or vertex added"
                        + " before it");
            }
            return addVertex(vertexName, vertex, lastAdded);
        }

        /**
         * Removes a vertex (or network input) and every reference to it: it disappears from other
         * vertices' inputs and from the outputs.
         *
         * @param vertexName the name
         * @return this builder
         */
        public GraphBuilder removeVertex(String vertexName) {
            return removeVertex(vertexName, true);
        }

        /**
         * Removes a vertex (or network input).
         *
         * @param vertexName the name
         * @param removeConnections also remove it from other vertices' inputs and from the outputs;
         *     false leaves those references for the caller to rewire (the reference's option)
         * @return this builder
         * @throws IllegalArgumentException when nothing has that name
         */
        public GraphBuilder removeVertex(String vertexName, boolean removeConnections) {
            if (!vertices.containsKey(vertexName) && !networkInputs.contains(vertexName)) {
                throw new IllegalArgumentException("no vertex or network input named \"" + vertexName
                        + "\"; the vertices are " + vertices.keySet() + " and the inputs " + networkInputs);
            }
            vertices.remove(vertexName);
            vertexInputs.remove(vertexName);
            networkInputs.remove(vertexName);
            if (removeConnections) {
                networkOutputs.remove(vertexName);
                for (List<String> in : vertexInputs.values()) {
                    in.removeIf(vertexName::equals);
                }
            }
            if (vertexName.equals(lastAdded)) {
                lastAdded = null;
            }
            return this;
        }

        /**
         * Sets the preprocessor of a layer added before.
         *
         * @param layerName the layer vertex's name
         * @param preProcessor the preprocessor, or null for none
         * @return this builder
         * @throws IllegalArgumentException when there is no layer with that name
         */
        public GraphBuilder inputPreProcessor(String layerName, InputPreProcessor preProcessor) {
            GraphVertex v = vertices.get(layerName);
            if (!(v instanceof LayerVertex)) {
                throw new IllegalArgumentException("no layer named \"" + layerName + "\" to attach a preprocessor to");
            }
            ((LayerVertex) v).setPreProcessor(preProcessor);
            return this;
        }

        /**
         * Sets the network outputs (replacing any set before), in the order of the labels arrays.
         *
         * @param outputNames names of output or loss layer vertices
         * @return this builder
         */
        public GraphBuilder setOutputs(String... outputNames) {
            List<String> out = names("output names", outputNames);
            networkOutputs.clear();
            networkOutputs.addAll(out);
            return this;
        }

        /**
         * How recurrent layers are trained: {@link BackpropType#Standard} (default) or
         * {@link BackpropType#TruncatedBPTT} (segments of {@link #tBPTTForwardLength(int)} steps, one update each).
         *
         * @param type the backpropagation type
         * @return this builder
         */
        public GraphBuilder backpropType(BackpropType type) {
            this.backpropType = Objects.requireNonNull(type, "backpropType");
            return this;
        }

        /**
         * Sets the truncated BPTT forward and backward lengths to the same value.
         *
         * @param length time steps per segment (at least 1; default 20)
         * @return this builder
         */
        public GraphBuilder tBPTTLength(int length) {
            return tBPTTForwardLength(length).tBPTTBackwardLength(length);
        }

        /**
         * @param forwardLength time steps per truncated BPTT segment (at least 1, checked at
         *     {@link #build()}; default 20)
         * @return this builder
         */
        public GraphBuilder tBPTTForwardLength(int forwardLength) {
            this.tbpttFwdLength = forwardLength;
            return this;
        }

        /**
         * @param backwardLength time steps backpropagated per truncated BPTT segment (at least 1,
         *     checked at {@link #build()}; default 20)
         * @return this builder
         */
        public GraphBuilder tBPTTBackwardLength(int backwardLength) {
            this.tbpttBackLength = backwardLength;
            return this;
        }

        /** @return the vertices added so far, by name (a copy; the vertices are live) */
        public Map<String, GraphVertex> getVertices() {
            return new LinkedHashMap<>(vertices);
        }

        /** @return each vertex's input names so far (a copy) */
        public Map<String, List<String>> getVertexInputs() {
            Map<String, List<String>> out = new LinkedHashMap<>();
            for (Map.Entry<String, List<String>> e : vertexInputs.entrySet()) {
                out.put(e.getKey(), new ArrayList<>(e.getValue()));
            }
            return out;
        }

        /** @return the network inputs so far (a copy) */
        public List<String> getNetworkInputs() {
            return new ArrayList<>(networkInputs);
        }

        /** @return the network outputs set (a copy) */
        public List<String> getNetworkOutputs() {
            return new ArrayList<>(networkOutputs);
        }

        /** @return the input types set, or null */
        public List<InputType> getNetworkInputTypes() {
            return networkInputTypes == null ? null : new ArrayList<>(networkInputTypes);
        }

        /**
         * Copies the vertices, names every layer after its vertex, fills its unset settings from the
         * global values, and lets the engine validate the graph and infer every unset {@code nIn}
         * (from {@link #setInputTypes} and the vertices before it).
         *
         * @return the validated configuration
         * @throws DL4JInvalidConfigException naming the vertex and the problem: a cycle, an unknown
         *     input name, a duplicate name, a shape mismatch at a merge or element-wise vertex, an
         *     output that is not an output or loss layer, a layer setting out of range, ...
         */
        public ComputationGraphConfiguration build() {
            ComputationGraphConfiguration c = resolveGlobals();
            c.resolveWithEngine();
            return c;
        }

        /**
         * Copies the vertices, names every layer after its vertex and fills its unset settings from
         * the global values; nothing is validated yet.
         *
         * @return the configuration as the user described it
         */
        ComputationGraphConfiguration resolveGlobals() {
            LinkedHashMap<String, GraphVertex> resolved = new LinkedHashMap<>();
            for (Map.Entry<String, GraphVertex> e : vertices.entrySet()) {
                GraphVertex v = e.getValue().clone();
                Layer l = layerOf(v);
                if (l != null) {
                    l.setLayerName(e.getKey());
                    globals.resolveInto(l);
                }
                resolved.put(e.getKey(), v);
            }
            ComputationGraphConfiguration c = new ComputationGraphConfiguration(globals.resolvedSeed(),
                    globals.isMiniBatch(), networkInputs, networkOutputs, networkInputTypes, resolved, vertexInputs);
            c.backpropType = backpropType;
            c.tbpttFwdLength = tbpttFwdLength;
            c.tbpttBackLength = tbpttBackLength;
            return c;
        }
    }
}
