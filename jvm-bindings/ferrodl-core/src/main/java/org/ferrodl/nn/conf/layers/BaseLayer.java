package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.nn.weights.WeightInit;

/**
 * A layer with parameters: activation, weight initialization, regularization and updaters.
 * Every setting is nullable; null means "take the global value" at build time.
 */
public abstract class BaseLayer extends Layer {
    private static final long serialVersionUID = 1L;

    /** Activation function. */
    protected Activation activation;
    /** Weight initialization. */
    protected WeightInit weightInit;
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
    /** Updater of the weights (and of the biases when {@link #biasUpdater} is null). */
    protected IUpdater updater;
    /** Updater of the biases. */
    protected IUpdater biasUpdater;

    /** For deserialization and subclasses. */
    protected BaseLayer() {
    }

    /** @param b builder to copy settings from */
    protected BaseLayer(Builder<?> b) {
        super(b);
        this.activation = b.activation;
        this.weightInit = b.weightInit;
        this.biasInit = b.biasInit;
        this.l1 = b.l1;
        this.l2 = b.l2;
        this.l1Bias = b.l1Bias;
        this.l2Bias = b.l2Bias;
        this.updater = b.updater == null ? null : b.updater.clone();
        this.biasUpdater = b.biasUpdater == null ? null : b.biasUpdater.clone();
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

    @Override
    public BaseLayer clone() {
        BaseLayer c = (BaseLayer) super.clone();
        c.updater = updater == null ? null : updater.clone();
        c.biasUpdater = biasUpdater == null ? null : biasUpdater.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        BaseLayer b = (BaseLayer) o;
        return activation == b.activation && weightInit == b.weightInit && Objects.equals(biasInit, b.biasInit)
                && Objects.equals(l1, b.l1) && Objects.equals(l2, b.l2) && Objects.equals(l1Bias, b.l1Bias)
                && Objects.equals(l2Bias, b.l2Bias) && Objects.equals(updater, b.updater)
                && Objects.equals(biasUpdater, b.biasUpdater);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), activation, weightInit, biasInit, l1, l2, l1Bias, l2Bias, updater,
                biasUpdater);
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
        /** Weights' updater. */
        protected IUpdater updater;
        /** Biases' updater. */
        protected IUpdater biasUpdater;

        /**
         * @param activation activation function
         * @return this builder
         */
        public T activation(Activation activation) {
            this.activation = activation;
            return self();
        }

        /**
         * @param weightInit weight initialization
         * @return this builder
         */
        public T weightInit(WeightInit weightInit) {
            this.weightInit = weightInit;
            return self();
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
    }
}
