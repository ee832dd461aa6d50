package org.ferrodl.nn.conf.layers;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.conf.layers.recurrent.Bidirectional;
import org.ferrodl.nn.conf.layers.recurrent.LastTimeStep;
import org.ferrodl.nn.conf.layers.recurrent.SimpleRnn;
import org.ferrodl.nn.conf.layers.recurrent.TimeDistributed;
import org.ferrodl.nn.conf.layers.util.MaskZeroLayer;
import org.ferrodl.nn.conf.serde.JsonMappers;

/**
 * Base class of layer configurations. Serialized to JSON with a {@code "type"} property naming the
 * concrete class; every layer has {@code name} and {@code dropOut}. See docs/ARCHITECTURE.md §2.2
 * for the exact field set of each type.
 *
 * <p>Settings left unset ({@code null}) in a layer are filled from the global values of
 * {@link org.ferrodl.nn.conf.NeuralNetConfiguration.Builder} when the configuration is built; sizes
 * ({@code nIn}) are inferred from {@code setInputType(..)}. Layer configurations are mutable and not
 * thread-safe.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = DenseLayer.class, name = "DenseLayer"),
    @JsonSubTypes.Type(value = OutputLayer.class, name = "OutputLayer"),
    @JsonSubTypes.Type(value = LossLayer.class, name = "LossLayer"),
    @JsonSubTypes.Type(value = ActivationLayer.class, name = "ActivationLayer"),
    @JsonSubTypes.Type(value = DropoutLayer.class, name = "DropoutLayer"),
    @JsonSubTypes.Type(value = BatchNormalization.class, name = "BatchNormalization"),
    @JsonSubTypes.Type(value = ConvolutionLayer.class, name = "ConvolutionLayer"),
    @JsonSubTypes.Type(value = Convolution1DLayer.class, name = "Convolution1DLayer"),
    @JsonSubTypes.Type(value = SubsamplingLayer.class, name = "SubsamplingLayer"),
    @JsonSubTypes.Type(value = Subsampling1DLayer.class, name = "Subsampling1DLayer"),
    @JsonSubTypes.Type(value = Upsampling2D.class, name = "Upsampling2D"),
    @JsonSubTypes.Type(value = ZeroPaddingLayer.class, name = "ZeroPaddingLayer"),
    @JsonSubTypes.Type(value = GlobalPoolingLayer.class, name = "GlobalPoolingLayer"),
    @JsonSubTypes.Type(value = EmbeddingLayer.class, name = "EmbeddingLayer"),
    @JsonSubTypes.Type(value = FrozenLayer.class, name = "FrozenLayer"),
    @JsonSubTypes.Type(value = LSTM.class, name = "LSTM"),
    @JsonSubTypes.Type(value = GravesLSTM.class, name = "GravesLSTM"),
    @JsonSubTypes.Type(value = SimpleRnn.class, name = "SimpleRnn"),
    @JsonSubTypes.Type(value = RnnOutputLayer.class, name = "RnnOutputLayer"),
    @JsonSubTypes.Type(value = RnnLossLayer.class, name = "RnnLossLayer"),
    @JsonSubTypes.Type(value = Bidirectional.class, name = "Bidirectional"),
    @JsonSubTypes.Type(value = LastTimeStep.class, name = "LastTimeStep"),
    @JsonSubTypes.Type(value = MaskZeroLayer.class, name = "MaskZeroLayer"),
    @JsonSubTypes.Type(value = TimeDistributed.class, name = "TimeDistributed"),
    @JsonSubTypes.Type(value = EmbeddingSequenceLayer.class, name = "EmbeddingSequenceLayer")
})
@JsonPropertyOrder({"name", "dropOut", "nIn", "nOut", "activation", "weightInit", "weightInitDistribution",
    "biasInit", "hasBias", "l1", "l2", "l1Bias", "l2Bias", "weightDecay", "weightDecayBias", "updater",
    "biasUpdater", "gradientNormalization", "gradientNormalizationThreshold", "lossFunction", "lossWeights",
    "decay", "eps", "lockGammaBeta", "gamma", "beta", "poolingType", "kernelSize", "stride", "padding",
    "dilation", "convolutionMode", "pnorm", "size", "collapseDimensions", "layer", "gateActivationFn",
    "forgetGateBiasInit", "weightInitRecurrent", "weightInitRecurrentDistribution", "hasLayerNorm", "inputLength",
    "inferInputLength", "outputFormat", "rnnDataFormat", "mode", "fwd", "maskingValue", "underlying"})
public abstract class Layer implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** Optional layer name (may be null). */
    protected String name;
    /**
     * Retain probability of the layer's input activations during training (inverted dropout);
     * {@code 0} or {@code 1}: no dropout. Null until resolved from the global value.
     */
    protected Double dropOut;

    /** For deserialization and subclasses. */
    protected Layer() {
    }

    /** @param builder the builder to copy settings from */
    protected Layer(Builder<?> builder) {
        this.name = builder.name;
        this.dropOut = builder.dropOut;
    }

    /** @return the layer name, or null */
    public String getLayerName() {
        return name;
    }

    /** @param name the layer name, or null */
    public void setLayerName(String name) {
        this.name = name;
    }

    /**
     * @return the retain probability of the layer's input activations ({@code 0} or {@code 1}: no
     *     dropout), or null when unset
     */
    public Double getDropOut() {
        return dropOut;
    }

    /** @param dropOut retain probability of the input activations, or null to take the global value */
    public void setDropOut(Double dropOut) {
        this.dropOut = dropOut;
    }

    /**
     * How error messages name this layer, the same way as the native engine:
     * {@code layer 2 (ConvolutionLayer "conv1")}.
     *
     * @param index the layer's index in the network
     * @return the description
     */
    public String describe(int index) {
        return "layer " + index + " (" + getClass().getSimpleName() + (name == null ? "" : " \"" + name + "\"") + ")";
    }

    /**
     * The type of this layer's output for a given input, checking the layer's settings against it.
     * The engine answers (its shape rule for this layer type); unset settings take the library
     * defaults for the question, and this layer is not modified.
     *
     * @param layerIndex the layer's index (for messages)
     * @param inputType the type of the layer's input
     * @return the type of the layer's output
     * @throws DL4JInvalidConfigException when the input does not suit the layer
     */
    public InputType getOutputType(int layerIndex, InputType inputType) {
        return EngineProbe.outputType(this, layerIndex, Objects.requireNonNull(inputType, "inputType"));
    }

    /**
     * Sets {@code nIn} (and other sizes that follow from the input, such as a BatchNormalization's
     * {@code nOut}) from the input type, as the engine infers them. Layers without such sizes, and
     * inputs this layer cannot take, leave it unchanged ({@code build()} reports the problem).
     *
     * @param inputType the type of the layer's input
     * @param override true: replace a value already set; false: only fill unset values
     */
    public void setNIn(InputType inputType, boolean override) {
        EngineProbe.setNIn(this, Objects.requireNonNull(inputType, "inputType"), override);
    }

    /**
     * Checks the settings that do not depend on the input; called on resolved layers.
     *
     * @param who the layer's description ({@link #describe(int)})
     * @throws DL4JInvalidConfigException naming the layer and the problem
     */
    protected void checkSettings(String who) {
        if (dropOut == null) {
            throw missing(who, "dropOut");
        }
        if (!(dropOut >= 0 && dropOut <= 1)) {
            throw invalid(who, "dropOut=" + dropOut + " is invalid (a retain probability in [0, 1]; 0 or 1 "
                    + "disables dropout)");
        }
    }

    /** @return the exception of a problem of layer {@code who} */
    protected static DL4JInvalidConfigException invalid(String who, String problem) {
        return new DL4JInvalidConfigException("Invalid configuration of " + who + ": " + problem);
    }

    /** @return the exception of a setting missing from a layer */
    protected static DL4JInvalidConfigException missing(String who, String field) {
        return invalid(who, field + " is missing");
    }

    /** Copies a 1- or 2-value size (one value: used for both dimensions). */
    static int[] pair(String layer, String field, int... v) {
        if (v == null || v.length < 1 || v.length > 2) {
            throw new DL4JInvalidConfigException(layer + " " + field
                    + " needs 2 values (height, width) or 1 value for both, got " + Arrays.toString(v));
        }
        return v.length == 1 ? new int[] {v[0], v[0]} : v.clone();
    }

    /** @return a deep copy of this layer configuration */
    @Override
    public Layer clone() {
        try {
            return (Layer) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (o == null || o.getClass() != getClass()) {
            return false;
        }
        Layer l = (Layer) o;
        return Objects.equals(l.name, name) && Objects.equals(l.dropOut, dropOut);
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass().getSimpleName(), name, dropOut);
    }

    /** @return the layer's JSON object on one line */
    @Override
    public String toString() {
        try {
            return JsonMappers.getMapper().writer().without(SerializationFeature.INDENT_OUTPUT)
                    .writeValueAsString(this);
        } catch (JsonProcessingException e) {
            return getClass().getSimpleName() + "(name=" + name + ")";
        }
    }

    /**
     * Base builder of all layers.
     *
     * @param <T> the concrete builder type, for chaining
     */
    public abstract static class Builder<T extends Builder<T>> {
        /** Layer name. */
        protected String name;
        /** Input retain probability. */
        protected Double dropOut;

        /**
         * @param layerName the layer's name
         * @return this builder
         */
        public T name(String layerName) {
            this.name = layerName;
            return self();
        }

        /**
         * Dropout of the layer's input: each input activation is kept with probability
         * {@code inputRetainProbability} during training (inverted dropout; nothing at inference).
         * {@code 0} (and {@code 1}) disable dropout. Default: the global value, 0.
         *
         * @param inputRetainProbability retain probability in [0, 1]
         * @return this builder
         */
        public T dropOut(double inputRetainProbability) {
            this.dropOut = inputRetainProbability;
            return self();
        }

        /** @return this builder, typed */
        @SuppressWarnings("unchecked")
        protected T self() {
            return (T) this;
        }

        /** @return the layer configuration */
        public abstract Layer build();
    }
}
