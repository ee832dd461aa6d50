package org.ferrodl.nn.conf;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import com.fasterxml.jackson.annotation.JsonInclude;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.jni.NativeConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerValidation;
import org.ferrodl.nn.conf.serde.JsonMappers;

/**
 * The configuration of a multi-layer network: seed, minibatch mode, training counters and the
 * fully resolved layers, and the input type given to {@code setInputType(..)}. Its JSON form ({@link #toJson()}) is the exact document the native engine
 * parses (docs/ARCHITECTURE.md §2, {@code formatVersion} {@value #FORMAT_VERSION}).
 *
 * <p>Mutable (counters) and not thread-safe.
 */
@JsonPropertyOrder({"formatVersion", "seed", "miniBatch", "iterationCount", "epochCount", "backpropType",
    "tbpttFwdLength", "tbpttBackLength", "inputType", "inputPreProcessors", "layers"})
public class MultiLayerConfiguration implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** The JSON format version written and accepted. */
    public static final int FORMAT_VERSION = 1;

    private int formatVersion = FORMAT_VERSION;
    private long seed;
    private boolean miniBatch = true;
    private int iterationCount;
    private int epochCount;
    @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = TbpttSettings.StandardBackprop.class)
    private BackpropType backpropType = BackpropType.Standard;
    @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = TbpttSettings.DefaultLength.class)
    private int tbpttFwdLength = TbpttSettings.DEFAULT_LENGTH;
    @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = TbpttSettings.DefaultLength.class)
    private int tbpttBackLength = TbpttSettings.DEFAULT_LENGTH;
    @JsonInclude(JsonInclude.Include.NON_NULL)
    private InputType inputType;
    /** Preprocessors given by layer index (null or empty: none given; the engine infers the usual ones). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    private TreeMap<Integer, InputPreProcessor> inputPreProcessors;
    private List<Layer> layers = new ArrayList<>();

    /** For deserialization. */
    protected MultiLayerConfiguration() {
    }

    /**
     * Creates a configuration from resolved layers; prefer {@link NeuralNetConfiguration.Builder}.
     * Call {@link #validate()} to check it.
     *
     * @param seed seed
     * @param miniBatch minibatch mode
     * @param layers resolved layers (copied)
     */
    public MultiLayerConfiguration(long seed, boolean miniBatch, List<Layer> layers) {
        this(seed, miniBatch, null, layers);
    }

    /**
     * Creates a configuration from resolved layers; prefer {@link NeuralNetConfiguration.Builder}.
     * Call {@link #validate()} to check it.
     *
     * @param seed seed
     * @param miniBatch minibatch mode
     * @param inputType the network's input type, or null: feed-forward of the first layer's nIn
     * @param layers resolved layers (copied)
     */
    public MultiLayerConfiguration(long seed, boolean miniBatch, InputType inputType, List<Layer> layers) {
        this.seed = seed;
        this.miniBatch = miniBatch;
        this.inputType = inputType;
        this.layers = new ArrayList<>(layers);
    }

    /** @return the seed of parameter initialization */
    public long getSeed() {
        return seed;
    }

    /** @return whether the score is averaged over each minibatch */
    public boolean isMiniBatch() {
        return miniBatch;
    }

    /** @return the number of training iterations (minibatches) done so far */
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

    /**
     * @return the input type given to {@code setInputType(..)}, or null (the input is then
     *     feed-forward of the first layer's nIn)
     */
    public InputType getInputType() {
        return inputType;
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

    /**
     * @param layer a layer index
     * @return the preprocessor given for that layer's input, or null (the engine then inserts the
     *     reference's implicit one where the activation kinds differ)
     */
    public InputPreProcessor getInputPreProcess(int layer) {
        return inputPreProcessors == null ? null : inputPreProcessors.get(layer);
    }

    /** @return the preprocessors given, by layer index (read-only; empty when none) */
    public Map<Integer, InputPreProcessor> getInputPreProcessors() {
        return inputPreProcessors == null ? Collections.emptyMap() : Collections.unmodifiableMap(inputPreProcessors);
    }

    /** @param preProcessors the preprocessors by layer index (copied), or null for none */
    public void setInputPreProcessors(Map<Integer, InputPreProcessor> preProcessors) {
        this.inputPreProcessors = preProcessors == null || preProcessors.isEmpty() ? null : new TreeMap<>(preProcessors);
    }

    /** @return the layers (unmodifiable view; the layer objects themselves are live) */
    public List<Layer> getLayers() {
        return Collections.unmodifiableList(layers);
    }

    /**
     * @param i layer index
     * @return the per-layer configuration of layer {@code i}
     */
    public NeuralNetConfiguration getConf(int i) {
        return new NeuralNetConfiguration(seed, miniBatch, layers.get(i));
    }

    /** @return the JSON form (docs/ARCHITECTURE.md §2) */
    public String toJson() {
        return write(JsonMappers.getMapper(), "JSON");
    }

    /** @return the YAML form: the same fields as {@link #toJson()} */
    public String toYaml() {
        return write(JsonMappers.getMapperYaml(), "YAML");
    }

    private String write(ObjectMapper m, String what) {
        try {
            return m.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the configuration as " + what + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param json a document written by {@link #toJson()}
     * @return the configuration
     * @throws DL4JInvalidConfigException for malformed JSON, unknown fields, another format version
     *     or an invalid configuration
     */
    public static MultiLayerConfiguration fromJson(String json) {
        return read(JsonMappers.getMapper(), json, "JSON");
    }

    /**
     * @param yaml a document written by {@link #toYaml()}
     * @return the configuration
     * @throws DL4JInvalidConfigException as {@link #fromJson(String)}
     */
    public static MultiLayerConfiguration fromYaml(String yaml) {
        return read(JsonMappers.getMapperYaml(), yaml, "YAML");
    }

    private static MultiLayerConfiguration read(ObjectMapper m, String text, String what) {
        Objects.requireNonNull(text, what);
        MultiLayerConfiguration c;
        try {
            c = m.readValue(text, MultiLayerConfiguration.class);
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid MultiLayerConfiguration " + what + ": "
                    + e.getOriginalMessage(), e);
        }
        if (c == null) {
            throw new DL4JInvalidConfigException("invalid MultiLayerConfiguration " + what + ": empty document");
        }
        if (c.formatVersion != FORMAT_VERSION) {
            throw new DL4JInvalidConfigException("unsupported MultiLayerConfiguration formatVersion "
                    + c.formatVersion + " (this version of ferrodl reads formatVersion " + FORMAT_VERSION + ")");
        }
        if (c.layers == null) {
            c.layers = new ArrayList<>();
        }
        c.validate();
        return c;
    }

    /**
     * Checks the configuration with the engine: at least one layer; every layer complete and in
     * range; every layer's {@code nIn} matching its input (the network input, {@link #getInputType()},
     * or the previous layer's output); convolution and pooling windows fitting their input; no
     * SOFTMAX with a single output; an OutputLayer or LossLayer as the last layer and only there;
     * valid updaters.
     *
     * @throws DL4JInvalidConfigException naming the layer index, type, name and the problem
     */
    public void validate() {
        if (iterationCount < 0 || epochCount < 0) {
            throw new DL4JInvalidConfigException("iterationCount and epochCount must be >= 0, got "
                    + iterationCount + " and " + epochCount);
        }
        TbpttSettings.check(backpropType, tbpttFwdLength, tbpttBackLength);
        LayerValidation.checkSettings(layers);
        layerTypes();
    }

    /**
     * Lets the engine fill unset nIn values (from the input type and the layers before) and
     * validate (for the builder); the inferred sizes are copied into the layer objects.
     */
    void inferAndValidate() {
        if (iterationCount < 0 || epochCount < 0) {
            validate();
        }
        TbpttSettings.check(backpropType, tbpttFwdLength, tbpttBackLength);
        LayerValidation.checkSettings(layers);
        JsonNode resolved = EngineSizes.parse(NativeConfiguration.resolveMultiLayer(toJson())).path("layers");
        if (resolved.size() != layers.size()) {
            throw new NativeStateException("the engine returned " + resolved.size() + " layers for " + layers.size());
        }
        for (int i = 0; i < layers.size(); i++) {
            EngineSizes.copyInto(layers.get(i), resolved.get(i));
        }
    }

    /** The engine's per-layer input and output types (validating the configuration). */
    private JsonNode layerTypes() {
        return EngineSizes.parse(NativeConfiguration.multiLayerTypes(toJson()));
    }

    private static List<InputType> types(JsonNode perLayer, String field) {
        List<InputType> out = new ArrayList<>(perLayer.size());
        try {
            for (JsonNode n : perLayer) {
                out.add(JsonMappers.getMapper().treeToValue(n.get(field), InputType.class));
            }
        } catch (JsonProcessingException | RuntimeException e) {
            throw new NativeStateException("cannot read the engine's layer types: " + e.getMessage());
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * The type of each layer's input: the network input ({@link #getInputType()}, or feed-forward of
     * the first layer's {@code nIn}), then each layer's output in turn.
     *
     * @return one input type per layer
     * @throws DL4JInvalidConfigException when the configuration is invalid
     */
    public List<InputType> getLayerInputTypes() {
        List<InputType> t = new ArrayList<>(types(layerTypes(), "inputType"));
        // The engine reports what layer 0 reads (a convolutionalFlat input read as an image);
        // the network input is what the user declared.
        if (inputType != null) {
            t.set(0, inputType);
        }
        return Collections.unmodifiableList(t);
    }

    /**
     * The type of each layer's output (activations), for the configured input type.
     *
     * @return one output type per layer; the last is the network's output
     * @throws DL4JInvalidConfigException when the configuration is invalid
     */
    public List<InputType> getLayerActivationTypes() {
        return types(layerTypes(), "outputType");
    }

    /**
     * The type of each layer's output for a given network input type (the reference's method; the
     * configuration's own input type is ignored and nothing is modified).
     *
     * @param inputType the network input type
     * @return one output type per layer
     * @throws DL4JInvalidConfigException when the layers do not suit that input
     */
    public List<InputType> getLayerActivationTypes(InputType inputType) {
        MultiLayerConfiguration c = clone();
        c.inputType = Objects.requireNonNull(inputType, "inputType");
        return types(c.layerTypes(), "outputType");
    }

    /** @return the number of input values per example (the width of a features row) */
    public long getInputSize() {
        return getLayerInputTypes().get(0).arrayElementsPerExample();
    }

    /** @return the number of output values per example (the width of a labels row) */
    public long getOutputSize() {
        List<InputType> out = getLayerActivationTypes();
        return out.get(out.size() - 1).arrayElementsPerExample();
    }

    @Override
    public MultiLayerConfiguration clone() {
        MultiLayerConfiguration c;
        try {
            c = (MultiLayerConfiguration) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
        c.layers = new ArrayList<>(layers.size());
        for (Layer l : layers) {
            c.layers.add(l.clone());
        }
        if (inputPreProcessors != null) {
            c.inputPreProcessors = new TreeMap<>();
            for (Map.Entry<Integer, InputPreProcessor> e : inputPreProcessors.entrySet()) {
                c.inputPreProcessors.put(e.getKey(), e.getValue() == null ? null : e.getValue().clone());
            }
        }
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MultiLayerConfiguration)) {
            return false;
        }
        MultiLayerConfiguration c = (MultiLayerConfiguration) o;
        return formatVersion == c.formatVersion && seed == c.seed && miniBatch == c.miniBatch
                && iterationCount == c.iterationCount && epochCount == c.epochCount
                && backpropType == c.backpropType && tbpttFwdLength == c.tbpttFwdLength
                && tbpttBackLength == c.tbpttBackLength && Objects.equals(inputType, c.inputType)
                && getInputPreProcessors().equals(c.getInputPreProcessors()) && layers.equals(c.layers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(formatVersion, seed, miniBatch, iterationCount, epochCount, backpropType, tbpttFwdLength,
                tbpttBackLength, inputType, getInputPreProcessors(), layers);
    }

    @Override
    public String toString() {
        return toJson();
    }
}
