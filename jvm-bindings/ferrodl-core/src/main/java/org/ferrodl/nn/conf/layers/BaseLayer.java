package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.nn.conf.GradientNormalization;
import org.ferrodl.nn.conf.distribution.Distribution;
import org.ferrodl.nn.weights.WeightInit;

/**
 * A layer with parameters: activation, weight initialization, regularization, updaters and gradient
 * normalization. Every setting is nullable; null means "take the global value" at build time.
 */
public abstract class BaseLayer extends Layer {
    private static final long serialVersionUID = 1L;

    /** Activation function. */
    protected Activation activation;
    /** Weight initialization. */
    protected WeightInit weightInit;
    /** Distribution of {@link WeightInit#DISTRIBUTION}, else null. */
    protected Distribution weightInitDistribution;
    /** Initial value of every bias. */
    protected Double biasInit;
    /** L1 coefficient for weights. */
    protected Double l1;
    /** L2 coefficient for weights. */
    protected Double l2;
    /** L1 coefficient for biases. */
    protected Double l1Bias;
    /** L2 coefficient for biases. */
    protected Double l2Bias;
    /** Weight decay coefficient for weights (applied after the updater, times the learning rate). */
    protected Double weightDecay;
    /** Weight decay coefficient for biases. */
    protected Double weightDecayBias;
    /** Updater of the weights (and of the biases when {@link #biasUpdater} is null). */
    protected IUpdater updater;
    /** Updater of the biases. */
    protected IUpdater biasUpdater;
    /** Gradient normalization or clipping. */
    protected GradientNormalization gradientNormalization;
    /** Threshold of the clipping modes of {@link #gradientNormalization}. */
    protected Double gradientNormalizationThreshold;

    /** For deserialization and subclasses. */
    protected BaseLayer() {
    }

    /** @param b builder to copy settings from */
    protected BaseLayer(Builder<?> b) {
        super(b);
        this.activation = b.activation;
        this.weightInit = b.weightInit;
        this.weightInitDistribution = b.weightInitDistribution;
        this.biasInit = b.biasInit;
        this.l1 = b.l1;
        this.l2 = b.l2;
        this.l1Bias = b.l1Bias;
        this.l2Bias = b.l2Bias;
        this.weightDecay = b.weightDecay;
        this.weightDecayBias = b.weightDecayBias;
        this.updater = b.updater == null ? null : b.updater.clone();
        this.biasUpdater = b.biasUpdater == null ? null : b.biasUpdater.clone();
        this.gradientNormalization = b.gradientNormalization;
        this.gradientNormalizationThreshold = b.gradientNormalizationThreshold;
    }

    /** @return activation function, or null when unset */
    public Activation getActivation() {
        return activation;
    }

    /** @param activation activation function */
    public void setActivation(Activation activation) {
        this.activation = activation;
    }

    /** @return weight initialization, or null when unset */
    public WeightInit getWeightInit() {
        return weightInit;
    }

    /** @param weightInit weight initialization */
    public void setWeightInit(WeightInit weightInit) {
        this.weightInit = weightInit;
    }

    /** @return the distribution of {@link WeightInit#DISTRIBUTION}, or null */
    public Distribution getWeightInitDistribution() {
        return weightInitDistribution;
    }

    /**
     * @return the distribution of {@link WeightInit#DISTRIBUTION}, or null
     * @see #getWeightInitDistribution()
     */
    public Distribution getDist() {
        return weightInitDistribution;
    }

    /** @param distribution the distribution of {@link WeightInit#DISTRIBUTION}, or null */
    public void setWeightInitDistribution(Distribution distribution) {
        this.weightInitDistribution = distribution;
    }

    /** @return bias initial value, or null when unset */
    public Double getBiasInit() {
        return biasInit;
    }

    /** @param biasInit bias initial value */
    public void setBiasInit(Double biasInit) {
        this.biasInit = biasInit;
    }

    /** @return L1 coefficient for weights, or null when unset */
    public Double getL1() {
        return l1;
    }

    /** @param l1 L1 coefficient for weights */
    public void setL1(Double l1) {
        this.l1 = l1;
    }

    /** @return L2 coefficient for weights, or null when unset */
    public Double getL2() {
        return l2;
    }

    /** @param l2 L2 coefficient for weights */
    public void setL2(Double l2) {
        this.l2 = l2;
    }

    /** @return L1 coefficient for biases, or null when unset */
    public Double getL1Bias() {
        return l1Bias;
    }

    /** @param l1Bias L1 coefficient for biases */
    public void setL1Bias(Double l1Bias) {
        this.l1Bias = l1Bias;
    }

    /** @return L2 coefficient for biases, or null when unset */
    public Double getL2Bias() {
        return l2Bias;
    }

    /** @param l2Bias L2 coefficient for biases */
    public void setL2Bias(Double l2Bias) {
        this.l2Bias = l2Bias;
    }

    /** @return weight decay coefficient for weights, or null when unset */
    public Double getWeightDecay() {
        return weightDecay;
    }

    /** @param weightDecay weight decay coefficient for weights */
    public void setWeightDecay(Double weightDecay) {
        this.weightDecay = weightDecay;
    }

    /** @return weight decay coefficient for biases, or null when unset */
    public Double getWeightDecayBias() {
        return weightDecayBias;
    }

    /** @param weightDecayBias weight decay coefficient for biases */
    public void setWeightDecayBias(Double weightDecayBias) {
        this.weightDecayBias = weightDecayBias;
    }

    /** @return the weights' updater, or null when unset */
    public IUpdater getIUpdater() {
        return updater;
    }

    /** @param updater the weights' updater */
    public void setIUpdater(IUpdater updater) {
        this.updater = updater;
    }

    /** @return the biases' updater, or null when unset */
    public IUpdater getBiasUpdater() {
        return biasUpdater;
    }

    /** @param biasUpdater the biases' updater */
    public void setBiasUpdater(IUpdater biasUpdater) {
        this.biasUpdater = biasUpdater;
    }

    /** @return gradient normalization, or null when unset */
    public GradientNormalization getGradientNormalization() {
        return gradientNormalization;
    }

    /** @param gradientNormalization gradient normalization */
    public void setGradientNormalization(GradientNormalization gradientNormalization) {
        this.gradientNormalization = gradientNormalization;
    }

    /** @return gradient normalization threshold, or null when unset */
    public Double getGradientNormalizationThreshold() {
        return gradientNormalizationThreshold;
    }

    /** @param threshold gradient normalization threshold */
    public void setGradientNormalizationThreshold(Double threshold) {
        this.gradientNormalizationThreshold = threshold;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        String missing = activation == null ? "activation"
                : weightInit == null ? "weightInit"
                : biasInit == null ? "biasInit"
                : l1 == null ? "l1"
                : l2 == null ? "l2"
                : l1Bias == null ? "l1Bias"
                : l2Bias == null ? "l2Bias"
                : weightDecay == null ? "weightDecay"
                : weightDecayBias == null ? "weightDecayBias"
                : updater == null ? "updater"
                : biasUpdater == null ? "biasUpdater"
                : gradientNormalization == null ? "gradientNormalization"
                : gradientNormalizationThreshold == null ? "gradientNormalizationThreshold"
                : null;
        if (missing != null) {
            throw missing(who, missing);
        }
        nonNegative(who, "l1", l1);
        nonNegative(who, "l2", l2);
        nonNegative(who, "l1Bias", l1Bias);
        nonNegative(who, "l2Bias", l2Bias);
        nonNegative(who, "weightDecay", weightDecay);
        nonNegative(who, "weightDecayBias", weightDecayBias);
        if (!Double.isFinite(biasInit)) {
            throw invalid(who, "biasInit=" + biasInit + " is invalid (must be finite)");
        }
        double t = gradientNormalizationThreshold;
        if (gradientNormalization != GradientNormalization.None ? !(Double.isFinite(t) && t > 0)
                : !(Double.isFinite(t) && t >= 0)) {
            throw invalid(who, "gradientNormalizationThreshold=" + t + " is invalid (must be a finite number > 0)");
        }
        if (weightInit == WeightInit.DISTRIBUTION && weightInitDistribution == null) {
            throw invalid(who, "weightInit DISTRIBUTION needs a distribution: use .weightInit(new "
                    + "NormalDistribution(mean, std)) (or UniformDistribution, TruncatedNormalDistribution)");
        }
        if (weightInitDistribution != null) {
            String p = weightInitDistribution.validate();
            if (p != null) {
                throw invalid(who, "weightInitDistribution " + p);
            }
        }
        checkUpdater(who, "updater", updater);
        checkUpdater(who, "biasUpdater", biasUpdater);
    }

    /** Checks a coefficient is finite and {@code >= 0}. */
    protected static void nonNegative(String who, String field, double v) {
        if (!(Double.isFinite(v) && v >= 0)) {
            throw invalid(who, field + " must be finite and >= 0, got " + v);
        }
    }

    private static void checkUpdater(String who, String field, IUpdater u) {
        String problem = u.validate();
        if (problem != null) {
            throw invalid(who, field + " " + u.getClass().getSimpleName() + ": " + problem);
        }
    }

    @Override
    public BaseLayer clone() {
        BaseLayer c = (BaseLayer) super.clone();
        c.updater = updater == null ? null : updater.clone();
        c.biasUpdater = biasUpdater == null ? null : biasUpdater.clone();
        c.weightInitDistribution = weightInitDistribution == null ? null : weightInitDistribution.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        BaseLayer b = (BaseLayer) o;
        return activation == b.activation && weightInit == b.weightInit
                && Objects.equals(weightInitDistribution, b.weightInitDistribution)
                && Objects.equals(biasInit, b.biasInit) && Objects.equals(l1, b.l1) && Objects.equals(l2, b.l2)
                && Objects.equals(l1Bias, b.l1Bias) && Objects.equals(l2Bias, b.l2Bias)
                && Objects.equals(weightDecay, b.weightDecay) && Objects.equals(weightDecayBias, b.weightDecayBias)
                && Objects.equals(updater, b.updater) && Objects.equals(biasUpdater, b.biasUpdater)
                && gradientNormalization == b.gradientNormalization
                && Objects.equals(gradientNormalizationThreshold, b.gradientNormalizationThreshold);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), activation, weightInit, weightInitDistribution, biasInit, l1, l2,
                l1Bias, l2Bias, weightDecay, weightDecayBias, updater, biasUpdater, gradientNormalization,
                gradientNormalizationThreshold);
    }

    /**
     * Builder of layers with parameters.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class Builder<T extends Builder<T>> extends Layer.Builder<T> {
        /** Activation function. */
        protected Activation activation;
        /** Weight initialization. */
        protected WeightInit weightInit;
        /** Distribution of {@link WeightInit#DISTRIBUTION}. */
        protected Distribution weightInitDistribution;
        /** Bias initial value. */
        protected Double biasInit;
        /** L1 for weights. */
        protected Double l1;
        /** L2 for weights. */
        protected Double l2;
        /** L1 for biases. */
        protected Double l1Bias;
        /** L2 for biases. */
        protected Double l2Bias;
        /** Weight decay for weights. */
        protected Double weightDecay;
        /** Weight decay for biases. */
        protected Double weightDecayBias;
        /** Weights' updater. */
        protected IUpdater updater;
        /** Biases' updater. */
        protected IUpdater biasUpdater;
        /** Gradient normalization. */
        protected GradientNormalization gradientNormalization;
        /** Gradient normalization threshold. */
        protected Double gradientNormalizationThreshold;

        /**
         * @param activation activation function
         * @return this builder
         */
        public T activation(Activation activation) {
            this.activation = activation;
            return self();
        }

        /**
         * @param weightInit weight initialization; {@link WeightInit#DISTRIBUTION} keeps a distribution
         *     set before, any other scheme clears it
         * @return this builder
         */
        public T weightInit(WeightInit weightInit) {
            this.weightInit = weightInit;
            if (weightInit != WeightInit.DISTRIBUTION) {
                this.weightInitDistribution = null;
            }
            return self();
        }

        /**
         * Weights drawn from a distribution: {@code weightInit(WeightInit.DISTRIBUTION)} with it.
         *
         * @param distribution the distribution
         * @return this builder
         */
        public T weightInit(Distribution distribution) {
            this.weightInit = WeightInit.DISTRIBUTION;
            this.weightInitDistribution = distribution;
            return self();
        }

        /**
         * @param distribution the distribution of the weights (same as {@link #weightInit(Distribution)})
         * @return this builder
         * @deprecated use {@link #weightInit(Distribution)}
         */
        @Deprecated
        public T dist(Distribution distribution) {
            return weightInit(distribution);
        }

        /**
         * @param biasInit initial value of every bias
         * @return this builder
         */
        public T biasInit(double biasInit) {
            this.biasInit = biasInit;
            return self();
        }

        /**
         * @param l1 L1 coefficient for weights
         * @return this builder
         */
        public T l1(double l1) {
            this.l1 = l1;
            return self();
        }

        /**
         * @param l2 L2 coefficient for weights
         * @return this builder
         */
        public T l2(double l2) {
            this.l2 = l2;
            return self();
        }

        /**
         * @param l1Bias L1 coefficient for biases
         * @return this builder
         */
        public T l1Bias(double l1Bias) {
            this.l1Bias = l1Bias;
            return self();
        }

        /**
         * @param l2Bias L2 coefficient for biases
         * @return this builder
         */
        public T l2Bias(double l2Bias) {
            this.l2Bias = l2Bias;
            return self();
        }

        /**
         * Weight decay of the weights: after the updater, {@code update += lr · coefficient · w}.
         *
         * @param coefficient weight decay coefficient
         * @return this builder
         */
        public T weightDecay(double coefficient) {
            this.weightDecay = coefficient;
            return self();
        }

        /**
         * Weight decay of the biases.
         *
         * @param coefficient weight decay coefficient
         * @return this builder
         */
        public T weightDecayBias(double coefficient) {
            this.weightDecayBias = coefficient;
            return self();
        }

        /**
         * @param updater updater of the weights (and biases unless biasUpdater is set)
         * @return this builder
         */
        public T updater(IUpdater updater) {
            this.updater = updater;
            return self();
        }

        /**
         * @param biasUpdater updater of the biases
         * @return this builder
         */
        public T biasUpdater(IUpdater biasUpdater) {
            this.biasUpdater = biasUpdater;
            return self();
        }

        /**
         * @param gradientNormalization gradient normalization or clipping (default None)
         * @return this builder
         */
        public T gradientNormalization(GradientNormalization gradientNormalization) {
            this.gradientNormalization = gradientNormalization;
            return self();
        }

        /**
         * @param threshold threshold of the clipping modes (default 1.0)
         * @return this builder
         */
        public T gradientNormalizationThreshold(double threshold) {
            this.gradientNormalizationThreshold = threshold;
            return self();
        }
    }
}
