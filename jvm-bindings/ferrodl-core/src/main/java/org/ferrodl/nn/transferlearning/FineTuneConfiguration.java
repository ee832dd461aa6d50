package org.ferrodl.nn.transferlearning;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.GradientNormalization;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.distribution.Distribution;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.Convolution1DLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.Subsampling1DLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.conf.serde.JsonMappers;
import org.ferrodl.nn.weights.WeightInit;

/**
 * Training settings that {@link TransferLearning.Builder} imposes on a network being modified. Only
 * the settings given to the {@link Builder} take effect; everything left unset keeps each layer's
 * own value.
 *
 * <p>What a set value does:
 * <ul>
 *   <li>On every <b>trainable layer kept from the original network</b> (frozen layers are never
 *       touched): {@code activation}, {@code weightInit}, {@code biasInit}, {@code updater},
 *       {@code biasUpdater}, {@code gradientNormalization} and its threshold replace the layer's value
 *       on layers with parameters; {@code dropOut} likewise (a value of 0 removes the layer's dropout;
 *       layers without parameters, such as a {@code DropoutLayer}, keep theirs); {@code convolutionMode}
 *       replaces it on convolution and subsampling layers. Setting {@code updater} without
 *       {@code biasUpdater} also replaces the bias updater of a layer whose bias updater was the same
 *       as its updater (a layer with a distinct bias updater keeps it).</li>
 *   <li>Regularization, as the reference treats it: when any of {@code l1}, {@code l2},
 *       {@code weightDecay} is set to a value above 0, those three replace the layer's weight
 *       regularization as a whole (the ones not set become 0); when the ones set are all 0, each of
 *       them is cleared on the layer and the others are kept. {@code l1Bias}, {@code l2Bias},
 *       {@code weightDecayBias} work the same way for biases. BatchNormalization layers keep their
 *       regularization, as they do with the global values of {@link NeuralNetConfiguration.Builder}.</li>
 *   <li>Layers added with {@link TransferLearning.Builder#addLayer} take these settings as their
 *       global defaults (a value set on the added layer itself wins; settings set nowhere take the
 *       defaults of {@link NeuralNetConfiguration.Builder}), see {@link #appliedNeuralNetConfigurationBuilder()}.</li>
 *   <li>{@code seed} and {@code miniBatch} replace the network's.</li>
 * </ul>
 *
 * <p>The reference's settings that ferrodl has no equivalent for (weight noise, constraints,
 * optimization algorithm, workspace modes, truncated BPTT, cuDNN modes, data type) are not offered.
 *
 * <pre>{@code
 * FineTuneConfiguration ft = new FineTuneConfiguration.Builder()
 *     .updater(new Adam(1e-4)).l2(1e-5).seed(123).build();
 * }</pre>
 *
 * <p>JSON ({@link #toJson()}): an object holding only the settings that are set, with the field names
 * of the layer JSON (docs/ARCHITECTURE.md §2). Mutable only through its builder; not thread-safe to
 * build.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"seed", "miniBatch", "activation", "weightInit", "weightInitDistribution", "biasInit",
    "dropOut", "updater", "biasUpdater", "l1", "l2", "weightDecay", "l1Bias", "l2Bias", "weightDecayBias",
    "gradientNormalization", "gradientNormalizationThreshold", "convolutionMode"})
public class FineTuneConfiguration implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    private Long seed;
    private Boolean miniBatch;
    private Activation activation;
    private WeightInit weightInit;
    private Distribution weightInitDistribution;
    private Double biasInit;
    private Double dropOut;
    private IUpdater updater;
    private IUpdater biasUpdater;
    private Double l1;
    private Double l2;
    private Double weightDecay;
    private Double l1Bias;
    private Double l2Bias;
    private Double weightDecayBias;
    private GradientNormalization gradientNormalization;
    private Double gradientNormalizationThreshold;
    private ConvolutionMode convolutionMode;

    /** For deserialization. */
    private FineTuneConfiguration() {
    }

    private FineTuneConfiguration(Builder b) {
        this.seed = b.seed;
        this.miniBatch = b.miniBatch;
        this.activation = b.activation;
        this.weightInit = b.weightInit;
        this.weightInitDistribution = b.weightInitDistribution == null ? null : b.weightInitDistribution.clone();
        this.biasInit = b.biasInit;
        this.dropOut = b.dropOut;
        this.updater = b.updater == null ? null : b.updater.clone();
        this.biasUpdater = b.biasUpdater == null ? null : b.biasUpdater.clone();
        this.l1 = b.l1;
        this.l2 = b.l2;
        this.weightDecay = b.weightDecay;
        this.l1Bias = b.l1Bias;
        this.l2Bias = b.l2Bias;
        this.weightDecayBias = b.weightDecayBias;
        this.gradientNormalization = b.gradientNormalization;
        this.gradientNormalizationThreshold = b.gradientNormalizationThreshold;
        this.convolutionMode = b.convolutionMode;
    }

    /** @return a new builder (same as {@code new FineTuneConfiguration.Builder()}) */
    public static Builder builder() {
        return new Builder();
    }

    // ---- getters: null means "not set" --------------------------------------------------------

    /** @return the seed of the new network, or null (the original network's) */
    public Long getSeed() {
        return seed;
    }

    /** @return the minibatch mode of the new network, or null (the original network's) */
    public Boolean getMiniBatch() {
        return miniBatch;
    }

    /** @return the activation imposed, or null */
    public Activation getActivation() {
        return activation;
    }

    /** @return the weight initialization imposed, or null */
    public WeightInit getWeightInit() {
        return weightInit;
    }

    /** @return the distribution of {@link WeightInit#DISTRIBUTION}, or null */
    public Distribution getWeightInitDistribution() {
        return weightInitDistribution == null ? null : weightInitDistribution.clone();
    }

    /** @return the bias initial value imposed, or null */
    public Double getBiasInit() {
        return biasInit;
    }

    /** @return the input retain probability imposed (0: no dropout), or null */
    public Double getDropOut() {
        return dropOut;
    }

    /** @return a copy of the updater imposed, or null */
    public IUpdater getUpdater() {
        return updater == null ? null : updater.clone();
    }

    /** @return a copy of the bias updater imposed, or null */
    public IUpdater getBiasUpdater() {
        return biasUpdater == null ? null : biasUpdater.clone();
    }

    /** @return the L1 coefficient of weights, or null */
    public Double getL1() {
        return l1;
    }

    /** @return the L2 coefficient of weights, or null */
    public Double getL2() {
        return l2;
    }

    /** @return the weight decay coefficient of weights, or null */
    public Double getWeightDecay() {
        return weightDecay;
    }

    /** @return the L1 coefficient of biases, or null */
    public Double getL1Bias() {
        return l1Bias;
    }

    /** @return the L2 coefficient of biases, or null */
    public Double getL2Bias() {
        return l2Bias;
    }

    /** @return the weight decay coefficient of biases, or null */
    public Double getWeightDecayBias() {
        return weightDecayBias;
    }

    /** @return the gradient normalization imposed, or null */
    public GradientNormalization getGradientNormalization() {
        return gradientNormalization;
    }

    /** @return the gradient normalization threshold imposed, or null */
    public Double getGradientNormalizationThreshold() {
        return gradientNormalizationThreshold;
    }

    /** @return the convolution mode imposed on convolution and subsampling layers, or null */
    public ConvolutionMode getConvolutionMode() {
        return convolutionMode;
    }

    // ---- application ---------------------------------------------------------------------------

    /**
     * Imposes these settings on a layer configuration, in place (see the class description). A
     * {@link FrozenLayer} is left unchanged.
     *
     * @param layer the layer configuration to modify
     */
    public void applyToLayer(Layer layer) {
        Objects.requireNonNull(layer, "layer");
        if (layer instanceof FrozenLayer) {
            return;
        }
        if (convolutionMode != null) {
            if (layer instanceof ConvolutionLayer) {
                ((ConvolutionLayer) layer).setConvolutionMode(convolutionMode);
            } else if (layer instanceof Convolution1DLayer) {
                ((Convolution1DLayer) layer).setConvolutionMode(convolutionMode);
            } else if (layer instanceof SubsamplingLayer) {
                ((SubsamplingLayer) layer).setConvolutionMode(convolutionMode);
            } else if (layer instanceof Subsampling1DLayer) {
                ((Subsampling1DLayer) layer).setConvolutionMode(convolutionMode);
            }
        }
        if (!(layer instanceof BaseLayer)) {
            return;
        }
        BaseLayer b = (BaseLayer) layer;
        if (dropOut != null) {
            b.setDropOut(dropOut);
        }
        if (activation != null) {
            b.setActivation(activation);
        }
        if (weightInit != null) {
            b.setWeightInit(weightInit);
            b.setWeightInitDistribution(weightInit == WeightInit.DISTRIBUTION && weightInitDistribution != null
                    ? weightInitDistribution.clone() : null);
        }
        if (biasInit != null) {
            b.setBiasInit(biasInit);
        }
        if (updater != null) {
            IUpdater old = b.getIUpdater();
            b.setIUpdater(updater.clone());
            if (biasUpdater == null && (b.getBiasUpdater() == null || b.getBiasUpdater().equals(old))) {
                b.setBiasUpdater(updater.clone());
            }
        }
        if (biasUpdater != null) {
            b.setBiasUpdater(biasUpdater.clone());
        }
        if (gradientNormalization != null) {
            b.setGradientNormalization(gradientNormalization);
        }
        if (gradientNormalizationThreshold != null) {
            b.setGradientNormalizationThreshold(gradientNormalizationThreshold);
        }
        if (!(b instanceof BatchNormalization)) {
            applyRegularization(b);
        }
    }

    private void applyRegularization(BaseLayer b) {
        if (positive(l1) || positive(l2) || positive(weightDecay)) {
            b.setL1(orZero(l1));
            b.setL2(orZero(l2));
            b.setWeightDecay(orZero(weightDecay));
        } else {
            if (l1 != null) {
                b.setL1(0.0);
            }
            if (l2 != null) {
                b.setL2(0.0);
            }
            if (weightDecay != null) {
                b.setWeightDecay(0.0);
            }
        }
        if (positive(l1Bias) || positive(l2Bias) || positive(weightDecayBias)) {
            b.setL1Bias(orZero(l1Bias));
            b.setL2Bias(orZero(l2Bias));
            b.setWeightDecayBias(orZero(weightDecayBias));
        } else {
            if (l1Bias != null) {
                b.setL1Bias(0.0);
            }
            if (l2Bias != null) {
                b.setL2Bias(0.0);
            }
            if (weightDecayBias != null) {
                b.setWeightDecayBias(0.0);
            }
        }
    }

    private static boolean positive(Double v) {
        return v != null && v > 0;
    }

    private static double orZero(Double v) {
        return v == null ? 0.0 : v;
    }

    /**
     * Imposes these settings on the layer of a per-layer configuration (see {@link #applyToLayer}).
     *
     * @param conf the per-layer configuration; its layer is modified in place
     */
    public void applyToNeuralNetConfiguration(NeuralNetConfiguration conf) {
        if (conf.getLayer() != null) {
            applyToLayer(conf.getLayer());
        }
    }

    /**
     * A network builder whose global values are these settings where set and
     * {@link NeuralNetConfiguration.Builder}'s defaults elsewhere: what layers added by
     * {@link TransferLearning.Builder#addLayer} are resolved with.
     *
     * @return a new builder
     */
    public NeuralNetConfiguration.Builder appliedNeuralNetConfigurationBuilder() {
        NeuralNetConfiguration.Builder b = new NeuralNetConfiguration.Builder();
        if (seed != null) {
            b.seed(seed);
        }
        if (miniBatch != null) {
            b.miniBatch(miniBatch);
        }
        if (activation != null) {
            b.activation(activation);
        }
        if (weightInit != null) {
            if (weightInit == WeightInit.DISTRIBUTION && weightInitDistribution != null) {
                b.weightInit(weightInitDistribution.clone());
            } else {
                b.weightInit(weightInit);
            }
        }
        if (biasInit != null) {
            b.biasInit(biasInit);
        }
        if (dropOut != null) {
            b.dropOut(dropOut);
        }
        if (updater != null) {
            b.updater(updater.clone());
        }
        if (biasUpdater != null) {
            b.biasUpdater(biasUpdater.clone());
        }
        if (l1 != null) {
            b.l1(l1);
        }
        if (l2 != null) {
            b.l2(l2);
        }
        if (weightDecay != null) {
            b.weightDecay(weightDecay);
        }
        if (l1Bias != null) {
            b.l1Bias(l1Bias);
        }
        if (l2Bias != null) {
            b.l2Bias(l2Bias);
        }
        if (weightDecayBias != null) {
            b.weightDecayBias(weightDecayBias);
        }
        if (gradientNormalization != null) {
            b.gradientNormalization(gradientNormalization);
        }
        if (gradientNormalizationThreshold != null) {
            b.gradientNormalizationThreshold(gradientNormalizationThreshold);
        }
        if (convolutionMode != null) {
            b.convolutionMode(convolutionMode);
        }
        return b;
    }

    // ---- serialization -------------------------------------------------------------------------

    /** @return the JSON form: the settings that are set */
    public String toJson() {
        return write(JsonMappers.getMapper(), "JSON");
    }

    /** @return the YAML form, with the same fields as {@link #toJson()} */
    public String toYaml() {
        return write(JsonMappers.getMapperYaml(), "YAML");
    }

    private String write(ObjectMapper m, String what) {
        try {
            return m.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the FineTuneConfiguration as " + what + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * @param json a document written by {@link #toJson()}
     * @return the configuration
     * @throws DL4JInvalidConfigException for malformed JSON, unknown fields or invalid values
     */
    public static FineTuneConfiguration fromJson(String json) {
        return read(JsonMappers.getMapper(), json, "JSON");
    }

    /**
     * @param yaml a document written by {@link #toYaml()}
     * @return the configuration
     * @throws DL4JInvalidConfigException as {@link #fromJson(String)}
     */
    public static FineTuneConfiguration fromYaml(String yaml) {
        return read(JsonMappers.getMapperYaml(), yaml, "YAML");
    }

    private static FineTuneConfiguration read(ObjectMapper m, String text, String what) {
        Objects.requireNonNull(text, what);
        FineTuneConfiguration c;
        try {
            c = m.readValue(text, FineTuneConfiguration.class);
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid FineTuneConfiguration " + what + ": "
                    + e.getOriginalMessage(), e);
        }
        if (c == null) {
            throw new DL4JInvalidConfigException("invalid FineTuneConfiguration " + what + ": empty document");
        }
        c.validate();
        return c;
    }

    /** Checks the values that are set. */
    private void validate() {
        check("l1", l1);
        check("l2", l2);
        check("weightDecay", weightDecay);
        check("l1Bias", l1Bias);
        check("l2Bias", l2Bias);
        check("weightDecayBias", weightDecayBias);
        if (dropOut != null && !(dropOut >= 0 && dropOut <= 1)) {
            throw problem("dropOut=" + dropOut + " is invalid (a retain probability in [0, 1]; 0 or 1 disables "
                    + "dropout)");
        }
        if (biasInit != null && !Double.isFinite(biasInit)) {
            throw problem("biasInit=" + biasInit + " is invalid (must be finite)");
        }
        if (gradientNormalizationThreshold != null
                && !(Double.isFinite(gradientNormalizationThreshold) && gradientNormalizationThreshold > 0)) {
            throw problem("gradientNormalizationThreshold=" + gradientNormalizationThreshold
                    + " is invalid (must be a finite number > 0)");
        }
        if (weightInit == WeightInit.DISTRIBUTION && weightInitDistribution == null) {
            throw problem("weightInit DISTRIBUTION needs a distribution: use .weightInit(new NormalDistribution("
                    + "mean, std)) (or UniformDistribution, TruncatedNormalDistribution)");
        }
        if (weightInitDistribution != null) {
            if (weightInit != WeightInit.DISTRIBUTION) {
                throw problem("weightInitDistribution is set but weightInit is " + weightInit
                        + " (use .weightInit(distribution))");
            }
            String p = weightInitDistribution.validate();
            if (p != null) {
                throw problem("weightInitDistribution " + p);
            }
        }
        checkUpdater("updater", updater);
        checkUpdater("biasUpdater", biasUpdater);
    }

    private static void check(String field, Double v) {
        if (v != null && !(Double.isFinite(v) && v >= 0)) {
            throw problem(field + " must be finite and >= 0, got " + v);
        }
    }

    private static void checkUpdater(String field, IUpdater u) {
        if (u != null) {
            String p = u.validate();
            if (p != null) {
                throw problem(field + " " + u.getClass().getSimpleName() + ": " + p);
            }
        }
    }

    private static DL4JInvalidConfigException problem(String what) {
        return new DL4JInvalidConfigException("Invalid FineTuneConfiguration: " + what);
    }

    @Override
    public FineTuneConfiguration clone() {
        try {
            FineTuneConfiguration c = (FineTuneConfiguration) super.clone();
            c.updater = updater == null ? null : updater.clone();
            c.biasUpdater = biasUpdater == null ? null : biasUpdater.clone();
            c.weightInitDistribution = weightInitDistribution == null ? null : weightInitDistribution.clone();
            return c;
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FineTuneConfiguration)) {
            return false;
        }
        FineTuneConfiguration f = (FineTuneConfiguration) o;
        return Objects.equals(seed, f.seed) && Objects.equals(miniBatch, f.miniBatch) && activation == f.activation
                && weightInit == f.weightInit && Objects.equals(weightInitDistribution, f.weightInitDistribution)
                && Objects.equals(biasInit, f.biasInit) && Objects.equals(dropOut, f.dropOut)
                && Objects.equals(updater, f.updater) && Objects.equals(biasUpdater, f.biasUpdater)
                && Objects.equals(l1, f.l1) && Objects.equals(l2, f.l2) && Objects.equals(weightDecay, f.weightDecay)
                && Objects.equals(l1Bias, f.l1Bias) && Objects.equals(l2Bias, f.l2Bias)
                && Objects.equals(weightDecayBias, f.weightDecayBias)
                && gradientNormalization == f.gradientNormalization
                && Objects.equals(gradientNormalizationThreshold, f.gradientNormalizationThreshold)
                && convolutionMode == f.convolutionMode;
    }

    @Override
    public int hashCode() {
        return Objects.hash(seed, miniBatch, activation, weightInit, weightInitDistribution, biasInit, dropOut,
                updater, biasUpdater, l1, l2, weightDecay, l1Bias, l2Bias, weightDecayBias, gradientNormalization,
                gradientNormalizationThreshold, convolutionMode);
    }

    /** @return the JSON form on one line */
    @Override
    public String toString() {
        return "FineTuneConfiguration" + toJson().replaceAll("\\s*\\n\\s*", " ");
    }

    /** Builder of {@link FineTuneConfiguration}: every setting is optional. */
    public static class Builder {
        private Long seed;
        private Boolean miniBatch;
        private Activation activation;
        private WeightInit weightInit;
        private Distribution weightInitDistribution;
        private Double biasInit;
        private Double dropOut;
        private IUpdater updater;
        private IUpdater biasUpdater;
        private Double l1;
        private Double l2;
        private Double weightDecay;
        private Double l1Bias;
        private Double l2Bias;
        private Double weightDecayBias;
        private GradientNormalization gradientNormalization;
        private Double gradientNormalizationThreshold;
        private ConvolutionMode convolutionMode;

        /** A builder with nothing set. */
        public Builder() {
        }

        /**
         * @param seed seed of the new network (initialization of new and changed layers)
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * @param seed seed of the new network
         * @return this builder
         */
        public Builder seed(int seed) {
            return seed((long) seed);
        }

        /**
         * @param miniBatch the new network's minibatch mode (score averaged over the minibatch)
         * @return this builder
         */
        public Builder miniBatch(boolean miniBatch) {
            this.miniBatch = miniBatch;
            return this;
        }

        /**
         * @param activation activation of every trainable layer with parameters, output layers included
         * @return this builder
         */
        public Builder activation(Activation activation) {
            this.activation = Objects.requireNonNull(activation, "activation");
            return this;
        }

        /**
         * @param weightInit weight initialization; {@link WeightInit#DISTRIBUTION} keeps a distribution
         *     set before, any other scheme clears it
         * @return this builder
         */
        public Builder weightInit(WeightInit weightInit) {
            this.weightInit = Objects.requireNonNull(weightInit, "weightInit");
            if (weightInit != WeightInit.DISTRIBUTION) {
                this.weightInitDistribution = null;
            }
            return this;
        }

        /**
         * Weights drawn from a distribution ({@code weightInit(WeightInit.DISTRIBUTION)} with it).
         *
         * @param distribution the distribution
         * @return this builder
         */
        public Builder weightInit(Distribution distribution) {
            this.weightInit = WeightInit.DISTRIBUTION;
            this.weightInitDistribution = Objects.requireNonNull(distribution, "distribution");
            return this;
        }

        /**
         * @param distribution the distribution of the weights
         * @return this builder
         * @deprecated use {@link #weightInit(Distribution)}
         */
        @Deprecated
        public Builder dist(Distribution distribution) {
            return weightInit(distribution);
        }

        /**
         * @param biasInit initial value of biases
         * @return this builder
         */
        public Builder biasInit(double biasInit) {
            this.biasInit = biasInit;
            return this;
        }

        /**
         * @param inputRetainProbability retain probability of the input activations of every trainable
         *     layer with parameters; 0 removes dropout
         * @return this builder
         */
        public Builder dropOut(double inputRetainProbability) {
            this.dropOut = inputRetainProbability;
            return this;
        }

        /**
         * @param updater updater of the weights (and of the biases unless {@link #biasUpdater} is set)
         * @return this builder
         */
        public Builder updater(IUpdater updater) {
            this.updater = Objects.requireNonNull(updater, "updater");
            return this;
        }

        /**
         * @param biasUpdater updater of the biases
         * @return this builder
         */
        public Builder biasUpdater(IUpdater biasUpdater) {
            this.biasUpdater = Objects.requireNonNull(biasUpdater, "biasUpdater");
            return this;
        }

        /**
         * @param l1 L1 coefficient of weights (see the class description for how it replaces the
         *     layers' regularization)
         * @return this builder
         */
        public Builder l1(double l1) {
            this.l1 = l1;
            return this;
        }

        /**
         * @param l2 L2 coefficient of weights
         * @return this builder
         */
        public Builder l2(double l2) {
            this.l2 = l2;
            return this;
        }

        /**
         * @param coefficient weight decay of weights ({@code update += lr · coefficient · w})
         * @return this builder
         */
        public Builder weightDecay(double coefficient) {
            this.weightDecay = coefficient;
            return this;
        }

        /**
         * @param l1Bias L1 coefficient of biases
         * @return this builder
         */
        public Builder l1Bias(double l1Bias) {
            this.l1Bias = l1Bias;
            return this;
        }

        /**
         * @param l2Bias L2 coefficient of biases
         * @return this builder
         */
        public Builder l2Bias(double l2Bias) {
            this.l2Bias = l2Bias;
            return this;
        }

        /**
         * @param coefficient weight decay of biases
         * @return this builder
         */
        public Builder weightDecayBias(double coefficient) {
            this.weightDecayBias = coefficient;
            return this;
        }

        /**
         * @param gradientNormalization gradient normalization or clipping
         * @return this builder
         */
        public Builder gradientNormalization(GradientNormalization gradientNormalization) {
            this.gradientNormalization = Objects.requireNonNull(gradientNormalization, "gradientNormalization");
            return this;
        }

        /**
         * @param threshold threshold of the clipping modes
         * @return this builder
         */
        public Builder gradientNormalizationThreshold(double threshold) {
            this.gradientNormalizationThreshold = threshold;
            return this;
        }

        /**
         * @param convolutionMode convolution mode of convolution and subsampling layers
         * @return this builder
         */
        public Builder convolutionMode(ConvolutionMode convolutionMode) {
            this.convolutionMode = Objects.requireNonNull(convolutionMode, "convolutionMode");
            return this;
        }

        /**
         * @return the configuration
         * @throws DL4JInvalidConfigException for an invalid value (negative coefficient, dropOut
         *     outside [0, 1], invalid updater, DISTRIBUTION without a distribution, ...)
         */
        public FineTuneConfiguration build() {
            FineTuneConfiguration c = new FineTuneConfiguration(this);
            c.validate();
            return c;
        }
    }
}
