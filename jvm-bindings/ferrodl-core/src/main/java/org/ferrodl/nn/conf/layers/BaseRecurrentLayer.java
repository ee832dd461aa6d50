package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.nn.conf.RNNFormat;
import org.ferrodl.nn.conf.distribution.Distribution;
import org.ferrodl.nn.weights.WeightInit;

/**
 * A recurrent layer: {@code nIn} inputs and {@code nOut} units per time step, input weights
 * {@code W}, recurrent weights {@code RW} and biases {@code b}. The recurrent weights are initialized
 * with {@code weightInitRecurrent} (null: the same scheme as the input weights, as in the reference).
 * Activations are {@code [minibatch, size, timeSteps]} ({@link RNNFormat#NCW}, default) or
 * {@link RNNFormat#NWC}.
 */
public abstract class BaseRecurrentLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Initialization of the recurrent weights, or null: the same as {@code weightInit}. */
    protected WeightInit weightInitRecurrent;
    /** Distribution of {@code weightInitRecurrent} {@link WeightInit#DISTRIBUTION}, else null. */
    protected Distribution weightInitRecurrentDistribution;
    /** Layout of the layer's input and output activations. */
    protected RNNFormat rnnDataFormat = RNNFormat.NCW;

    /** For deserialization and subclasses. */
    protected BaseRecurrentLayer() {
    }

    /** @param b the builder */
    protected BaseRecurrentLayer(Builder<?> b) {
        super(b);
        this.weightInitRecurrent = b.weightInitRecurrent;
        this.weightInitRecurrentDistribution = b.weightInitRecurrentDistribution == null ? null
                : b.weightInitRecurrentDistribution.clone();
        this.rnnDataFormat = b.rnnDataFormat;
    }

    /** @return the recurrent weights' initialization, or null (the same as {@link #getWeightInit()}) */
    public WeightInit getWeightInitRecurrent() {
        return weightInitRecurrent;
    }

    /** @param weightInitRecurrent the recurrent weights' initialization, or null for the input weights' */
    public void setWeightInitRecurrent(WeightInit weightInitRecurrent) {
        this.weightInitRecurrent = weightInitRecurrent;
    }

    /** @return the distribution of the recurrent weights ({@link WeightInit#DISTRIBUTION}), or null */
    public Distribution getWeightInitRecurrentDistribution() {
        return weightInitRecurrentDistribution;
    }

    /** @param distribution the distribution of the recurrent weights, or null */
    public void setWeightInitRecurrentDistribution(Distribution distribution) {
        this.weightInitRecurrentDistribution = distribution;
    }

    /** @return the layout of the activations (default {@link RNNFormat#NCW}) */
    public RNNFormat getRnnDataFormat() {
        return rnnDataFormat;
    }

    /** @param rnnDataFormat the layout of the activations */
    public void setRnnDataFormat(RNNFormat rnnDataFormat) {
        this.rnnDataFormat = rnnDataFormat;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (rnnDataFormat == null) {
            throw missing(who, "rnnDataFormat");
        }
        if (weightInitRecurrent == WeightInit.DISTRIBUTION && weightInitRecurrentDistribution == null) {
            throw invalid(who, "weightInitRecurrent DISTRIBUTION needs a distribution: use "
                    + ".weightInitRecurrent(new NormalDistribution(mean, std))");
        }
        if (weightInitRecurrentDistribution != null) {
            String p = weightInitRecurrentDistribution.validate();
            if (p != null) {
                throw invalid(who, "weightInitRecurrentDistribution " + p);
            }
        }
    }

    @Override
    public BaseRecurrentLayer clone() {
        BaseRecurrentLayer c = (BaseRecurrentLayer) super.clone();
        c.weightInitRecurrentDistribution = weightInitRecurrentDistribution == null ? null
                : weightInitRecurrentDistribution.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        BaseRecurrentLayer r = (BaseRecurrentLayer) o;
        return weightInitRecurrent == r.weightInitRecurrent
                && Objects.equals(weightInitRecurrentDistribution, r.weightInitRecurrentDistribution)
                && rnnDataFormat == r.rnnDataFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), weightInitRecurrent, weightInitRecurrentDistribution, rnnDataFormat);
    }

    /**
     * Builder of recurrent layers.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class Builder<T extends Builder<T>> extends FeedForwardLayer.Builder<T> {
        /** Recurrent weights' initialization. */
        protected WeightInit weightInitRecurrent;
        /** Its distribution. */
        protected Distribution weightInitRecurrentDistribution;
        /** Activation layout. */
        protected RNNFormat rnnDataFormat = RNNFormat.NCW;

        /**
         * @param weightInit initialization of the recurrent weights only (default: the same as the input
         *     weights' {@code weightInit}); any scheme but {@link WeightInit#DISTRIBUTION} clears a
         *     distribution set before
         * @return this builder
         */
        public T weightInitRecurrent(WeightInit weightInit) {
            this.weightInitRecurrent = weightInit;
            if (weightInit != WeightInit.DISTRIBUTION) {
                this.weightInitRecurrentDistribution = null;
            }
            return self();
        }

        /**
         * @param distribution the distribution the recurrent weights are drawn from
         * @return this builder
         */
        public T weightInitRecurrent(Distribution distribution) {
            this.weightInitRecurrent = WeightInit.DISTRIBUTION;
            this.weightInitRecurrentDistribution = distribution;
            return self();
        }

        /**
         * @param format layout of the activations: {@link RNNFormat#NCW} (default) or {@link RNNFormat#NWC}
         * @return this builder
         */
        public T dataFormat(RNNFormat format) {
            this.rnnDataFormat = Objects.requireNonNull(format, "format");
            return self();
        }
    }
}
