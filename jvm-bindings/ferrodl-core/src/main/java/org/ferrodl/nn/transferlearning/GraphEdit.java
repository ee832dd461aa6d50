package org.ferrodl.nn.transferlearning;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.InputPreProcessor;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.FrozenVertex;
import org.ferrodl.nn.conf.graph.GraphVertex;
import org.ferrodl.nn.conf.graph.LayerVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;

/**
 * The configuration half of transfer learning on a graph (the reference's
 * {@code TransferLearning.GraphBuilder}): edits a copy of a {@link ComputationGraphConfiguration} by
 * vertex name and reports which vertices keep their trained parameters. The network half (create
 * the new graph, copy those parameters with {@link #copyKeptParameters}) needs only the graph's
 * {@code paramTable()}/{@code params()}/{@code setParams()}.
 *
 * <p>Edits apply in call order; {@link #build()}:
 * <ol>
 *   <li>wraps the layer of every vertex named in {@link #setFeatureExtractor} and of every vertex
 *       they depend on in a {@link FrozenLayer} (an already frozen one stays);</li>
 *   <li>applies the {@link FineTuneConfiguration} to every other layer kept from the original, then
 *       the weight initializations given to nOutReplace/nInReplace;</li>
 *   <li>builds the graph with the fine-tune settings as global values for added layers (seed and
 *       minibatch mode: the fine-tune ones, else the original's; counters start at 0), so the
 *       engine re-infers every cleared {@code nIn} and validates the result.</li>
 * </ol>
 * Not thread-safe; the original configuration is never modified.
 */
final class GraphEdit {
    /** One vertex of the graph being edited. */
    private static final class Node {
        GraphVertex vertex;
        List<String> inputs;
        /** Whether the vertex comes from the original graph (its parameters can be copied). */
        final boolean original;
        /** Whether its parameters are re-initialized rather than copied. */
        boolean reinit;
        /** A weight initialization that nOutReplace/nInReplace imposed. */
        TransferLearning.Init init;

        Node(GraphVertex vertex, List<String> inputs, boolean original) {
            this.vertex = vertex;
            this.inputs = new ArrayList<>(inputs);
            this.original = original;
        }

        Node copy() {
            Node n = new Node(vertex.clone(), inputs, original);
            n.reinit = reinit;
            n.init = init;
            return n;
        }
    }

    /** What {@link #build()} returns. */
    static final class Result {
        /** The edited, validated configuration. */
        final ComputationGraphConfiguration conf;
        /** Vertices whose parameters are copied from the original graph (same names there). */
        final Set<String> keptParameters;

        Result(ComputationGraphConfiguration conf, Set<String> keptParameters) {
            this.conf = conf;
            this.keptParameters = Collections.unmodifiableSet(keptParameters);
        }
    }

    private final ComputationGraphConfiguration orig;
    private final LinkedHashMap<String, Node> nodes = new LinkedHashMap<>();
    private final List<String> inputs;
    private final List<String> outputs;
    private List<InputType> inputTypes;
    private final Set<String> featureExtractors = new LinkedHashSet<>();
    private FineTuneConfiguration fineTune;

    GraphEdit(ComputationGraphConfiguration orig) {
        this.orig = Objects.requireNonNull(orig, "orig").clone();
        for (Map.Entry<String, GraphVertex> e : this.orig.getVertices().entrySet()) {
            nodes.put(e.getKey(), new Node(e.getValue(), this.orig.getVertexInputs().get(e.getKey()), true));
        }
        this.inputs = new ArrayList<>(this.orig.getNetworkInputs());
        this.outputs = new ArrayList<>(this.orig.getNetworkOutputs());
        this.inputTypes = this.orig.getNetworkInputTypes() == null ? null
                : new ArrayList<>(this.orig.getNetworkInputTypes());
    }

    void fineTuneConfiguration(FineTuneConfiguration fineTune) {
        this.fineTune = Objects.requireNonNull(fineTune, "fineTuneConfiguration");
    }

    void setFeatureExtractor(String... layerNames) {
        for (String n : Objects.requireNonNull(layerNames, "layerNames")) {
            node(n, "setFeatureExtractor");
            featureExtractors.add(n);
        }
    }

    private Node node(String name, String op) {
        Node n = nodes.get(name);
        if (n == null) {
            throw new DL4JInvalidConfigException(op + "(\"" + name + "\"): no vertex of that name; the vertices are "
                    + nodes.keySet());
        }
        return n;
    }

    /** The layer of a vertex, unwrapping FrozenVertex (a FrozenLayer stays). */
    private static Layer layerOf(GraphVertex v) {
        if (v instanceof FrozenVertex) {
            return layerOf(((FrozenVertex) v).getUnderlying());
        }
        return v instanceof LayerVertex ? ((LayerVertex) v).getLayer() : null;
    }

    private FeedForwardLayer sizedLayer(String name, String op) {
        Node n = node(name, op);
        Layer l = layerOf(n.vertex);
        if (l instanceof FrozenLayer || n.vertex instanceof FrozenVertex) {
            throw new DL4JInvalidConfigException(op + "(\"" + name + "\"): the layer is frozen; its parameters "
                    + "cannot be re-initialized");
        }
        if (!(l instanceof FeedForwardLayer) || l instanceof BatchNormalization) {
            throw new DL4JInvalidConfigException(op + "(\"" + name + "\"): " + (l == null ? "the vertex is a "
                    + n.vertex.getClass().getSimpleName() : "a " + l.getClass().getSimpleName())
                    + " has no size to replace (DenseLayer, OutputLayer, ConvolutionLayer, Convolution1DLayer, "
                    + "EmbeddingLayer have)");
        }
        return (FeedForwardLayer) l;
    }

    /**
     * Sets a layer's nOut and re-initializes it; the layers fed by it (directly, or through vertices
     * and layers without weights) get their nIn re-inferred and are re-initialized with
     * {@code initNext}; batch normalization on the way follows the new size.
     */
    void nOutReplace(String layerName, long nOut, TransferLearning.Init init, TransferLearning.Init initNext) {
        if (nOut <= 0) {
            throw new DL4JInvalidConfigException("nOutReplace(\"" + layerName + "\"): nOut must be at least 1, got "
                    + nOut);
        }
        FeedForwardLayer l = sizedLayer(layerName, "nOutReplace");
        l.setNOut(nOut);
        Node n = nodes.get(layerName);
        n.reinit = true;
        n.init = init;
        Deque<String> todo = new ArrayDeque<>(consumers(layerName));
        Set<String> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            String c = todo.poll();
            if (!seen.add(c)) {
                continue;
            }
            Node cn = nodes.get(c);
            Layer cl = layerOf(cn.vertex);
            if (cl instanceof FrozenLayer || cn.vertex instanceof FrozenVertex) {
                throw new DL4JInvalidConfigException("nOutReplace(\"" + layerName + "\"): vertex \"" + c + "\" takes "
                        + "its output but is frozen; its nIn cannot change");
            }
            if (cl instanceof BatchNormalization) {
                ((BatchNormalization) cl).setNIn((Long) null);
                ((BatchNormalization) cl).setNOut(null);
                cn.reinit = true;
                todo.addAll(consumers(c));
            } else if (cl instanceof FeedForwardLayer) {
                ((FeedForwardLayer) cl).setNIn((Long) null);
                cn.reinit = true;
                if (initNext != null) {
                    cn.init = initNext;
                }
            } else {
                // A vertex or a layer without weights: the size passes through to its consumers.
                todo.addAll(consumers(c));
            }
        }
    }

    /** Sets a layer's nIn and re-initializes it. */
    void nInReplace(String layerName, long nIn, TransferLearning.Init init) {
        if (nIn <= 0) {
            throw new DL4JInvalidConfigException("nInReplace(\"" + layerName + "\"): nIn must be at least 1, got " + nIn);
        }
        sizedLayer(layerName, "nInReplace").setNIn(nIn);
        Node n = nodes.get(layerName);
        n.reinit = true;
        n.init = init;
    }

    private List<String> consumers(String name) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Node> e : nodes.entrySet()) {
            if (e.getValue().inputs.contains(name)) {
                out.add(e.getKey());
            }
        }
        return out;
    }

    /** Removes a vertex; other vertices keep naming it, for a replacement added under the same name. */
    void removeVertexKeepConnections(String name) {
        node(name, "removeVertexKeepConnections");
        nodes.remove(name);
        featureExtractors.remove(name);
    }

    /** Removes a vertex and every reference to it (inputs of other vertices, outputs). */
    void removeVertexAndConnections(String name) {
        removeVertexKeepConnections(name);
        for (Node n : nodes.values()) {
            n.inputs.removeIf(name::equals);
        }
        outputs.remove(name);
    }

    private void checkNewName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("vertex name must not be null or empty");
        }
        if (nodes.containsKey(name) || inputs.contains(name)) {
            throw new IllegalArgumentException("the name \"" + name + "\" is already used by a vertex or input");
        }
    }

    void addLayer(String name, Layer layer, InputPreProcessor preProcessor, String... layerInputs) {
        checkNewName(name);
        nodes.put(name, new Node(new LayerVertex(Objects.requireNonNull(layer, "layer").clone(),
                preProcessor == null ? null : preProcessor.clone()), Arrays.asList(layerInputs), false));
    }

    void addVertex(String name, GraphVertex vertex, String... vertexInputs) {
        checkNewName(name);
        nodes.put(name, new Node(Objects.requireNonNull(vertex, "vertex").clone(), Arrays.asList(vertexInputs), false));
    }

    void addInputs(String... names) {
        for (String n : names) {
            checkNewName(n);
            inputs.add(n);
        }
    }

    void setInputTypes(InputType... types) {
        this.inputTypes = new ArrayList<>(Arrays.asList(types));
    }

    void setOutputs(String... names) {
        outputs.clear();
        outputs.addAll(Arrays.asList(names));
    }

    /** Every vertex that a feature-extractor vertex depends on, and those vertices themselves. */
    private Set<String> frozenSet(Map<String, Node> edited) {
        Set<String> frozen = new LinkedHashSet<>();
        Deque<String> todo = new ArrayDeque<>(featureExtractors);
        while (!todo.isEmpty()) {
            String v = todo.poll();
            Node n = edited.get(v);
            if (n == null || !frozen.add(v)) {
                continue;
            }
            todo.addAll(n.inputs);
        }
        return frozen;
    }

    Result build() {
        LinkedHashMap<String, Node> edited = new LinkedHashMap<>();
        for (Map.Entry<String, Node> e : nodes.entrySet()) {
            edited.put(e.getKey(), e.getValue().copy());
        }
        Set<String> frozen = frozenSet(edited);
        Set<String> kept = new LinkedHashSet<>();
        for (Map.Entry<String, Node> e : edited.entrySet()) {
            String name = e.getKey();
            Node n = e.getValue();
            Layer l = layerOf(n.vertex);
            if (frozen.contains(name) && l != null) {
                if (!n.original) {
                    throw new DL4JInvalidConfigException("setFeatureExtractor(" + featureExtractors + ") would freeze "
                            + "vertex \"" + name + "\", which addLayer added with fresh parameters");
                }
                if (n.reinit) {
                    throw new DL4JInvalidConfigException("setFeatureExtractor(" + featureExtractors + ") would freeze "
                            + "vertex \"" + name + "\", whose parameters nOutReplace/nInReplace re-initialize");
                }
                if (!(l instanceof FrozenLayer) && !(n.vertex instanceof FrozenVertex)) {
                    freeze(n);
                }
            } else if (n.original && l != null && !(l instanceof FrozenLayer) && !(n.vertex instanceof FrozenVertex)
                    && fineTune != null) {
                fineTune.applyToLayer(l);
            }
            if (n.init != null && l instanceof BaseLayer) {
                n.init.applyTo((BaseLayer) l);
            }
            if (n.original && !n.reinit && l != null) {
                kept.add(name);
            }
        }
        NeuralNetConfiguration.Builder globals = fineTune != null ? fineTune.appliedNeuralNetConfigurationBuilder()
                : new NeuralNetConfiguration.Builder();
        if (fineTune == null || fineTune.getSeed() == null) {
            globals.seed(orig.getSeed());
        }
        if (fineTune == null || fineTune.getMiniBatch() == null) {
            globals.miniBatch(orig.isMiniBatch());
        }
        ComputationGraphConfiguration.GraphBuilder gb = globals.graphBuilder().addInputs(inputs);
        if (inputTypes != null) {
            gb.setInputTypes(inputTypes.toArray(new InputType[0]));
        }
        for (Map.Entry<String, Node> e : edited.entrySet()) {
            gb.addVertex(e.getKey(), e.getValue().vertex, e.getValue().inputs.toArray(new String[0]));
        }
        gb.setOutputs(outputs.toArray(new String[0]));
        gb.backpropType(orig.getBackpropType()).tBPTTForwardLength(orig.getTbpttFwdLength())
                .tBPTTBackwardLength(orig.getTbpttBackLength());
        try {
            return new Result(gb.build(), kept);
        } catch (DL4JInvalidConfigException e) {
            throw new DL4JInvalidConfigException("TransferLearning: the edited graph is invalid: " + e.getMessage(), e);
        }
    }

    private static void freeze(Node n) {
        LayerVertex lv = (LayerVertex) n.vertex;
        n.vertex = new LayerVertex(new FrozenLayer(lv.getLayer()), lv.getPreProcessor());
    }

    /**
     * The new graph's flat parameters with every kept vertex's blocks copied from the original by
     * key ({@code "<vertex>_<param>"}, the graph's param table keys).
     *
     * @param original the original graph's param table
     * @param fresh the new graph's param table, in {@code params()} order
     * @param kept vertices whose parameters are copied
     * @return the flat vector to give the new graph's {@code setParams}
     * @throws IllegalStateException when a kept block has no counterpart of the same size
     */
    static INDArray copyKeptParameters(Map<String, INDArray> original, Map<String, INDArray> fresh,
                                       Set<String> kept) {
        int total = 0;
        for (INDArray a : fresh.values()) {
            total = Math.addExact(total, Math.toIntExact(a.length()));
        }
        float[] flat = new float[total];
        int offset = 0;
        for (Map.Entry<String, INDArray> e : fresh.entrySet()) {
            String key = e.getKey();
            int len = Math.toIntExact(e.getValue().length());
            String owner = key.substring(0, Math.max(0, key.lastIndexOf('_')));
            INDArray src = e.getValue();
            if (kept.contains(owner)) {
                src = original.get(key);
                if (src == null || src.length() != len) {
                    throw new IllegalStateException("TransferLearning: parameter " + key + " (" + len + " values) has "
                            + "no counterpart of the same size in the original graph");
                }
            }
            System.arraycopy(NDArray.internalData(src), 0, flat, offset, len);
            offset += len;
        }
        return new NDArray(flat, 1, total);
    }
}
