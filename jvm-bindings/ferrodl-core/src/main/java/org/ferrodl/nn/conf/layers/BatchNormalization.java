package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.nn.conf.inputs.InputType;

/**
 * Batch normalization over the features of a feed-forward input or the channels of a convolutional
 * (or recurrent) input. {@code nIn} and {@code nOut} are that number, inferred from
 * {@code setInputType(..)}. Parameters: {@code gamma} and {@code beta} (learned unless
 * {@code lockGammaBeta}), and the running mean and variance, updated with {@code decay} during
 * training.
 *
 * <p>As in the reference, the global l1/l2/weightDecay values do not apply to this layer's
 * parameters (set them on the layer itself to regularize gamma/beta); the global activation does.
 *
 * <pre>{@code new BatchNormalization.Builder().build()}</pre>
 */
public class BatchNormalization extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Decay of the running mean and variance. */
    protected double decay = 0.9;
    /** Added to the variance. */
    protected double eps = 1e-5;
    /** Whether gamma and beta are fixed to {@link #gamma} and {@link #beta}. */
    protected boolean lockGammaBeta;
    /** Fixed gamma (with lockGammaBeta), and the initial gamma otherwise. */
    protected double gamma = 1.0;
    /** Fixed beta (with lockGammaBeta), and the initial beta otherwise. */
    protected double beta;

    /** For deserialization. */
    protected BatchNormalization() {
    }

    /** @param b the builder */
    protected BatchNormalization(Builder b) {
        super(b);
        this.decay = b.decay;
        this.eps = b.eps;
        this.lockGammaBeta = b.lockGammaBeta;
        this.gamma = b.gamma;
        this.beta = b.beta;
    }

    /** @return decay of the running statistics (default 0.9) */
    public double getDecay() {
        return decay;
    }

    /** @param decay decay of the running statistics */
    public void setDecay(double decay) {
        this.decay = decay;
    }

    /** @return epsilon added to the variance (default 1e-5) */
    public double getEps() {
        return eps;
    }

    /** @param eps epsilon added to the variance */
    public void setEps(double eps) {
        this.eps = eps;
    }

    /** @return whether gamma and beta are fixed (default false) */
    public boolean isLockGammaBeta() {
        return lockGammaBeta;
    }

    /** @param lockGammaBeta whether gamma and beta are fixed */
    public void setLockGammaBeta(boolean lockGammaBeta) {
        this.lockGammaBeta = lockGammaBeta;
    }

    /** @return gamma (default 1.0) */
    public double getGamma() {
        return gamma;
    }

    /** @param gamma gamma */
    public void setGamma(double gamma) {
        this.gamma = gamma;
    }

    /** @return beta (default 0.0) */
    public double getBeta() {
        return beta;
    }

    /** @param beta beta */
    public void setBeta(double beta) {
        this.beta = beta;
    }

    private static Long channelsOrFeatures(InputType in) {
        if (in instanceof InputType.InputTypeFeedForward) {
            return ((InputType.InputTypeFeedForward) in).getSize();
        }
        if (in instanceof InputType.InputTypeConvolutional) {
            return ((InputType.InputTypeConvolutional) in).getChannels();
        }
        if (in instanceof InputType.InputTypeConvolutionalFlat) {
            return ((InputType.InputTypeConvolutionalFlat) in).getDepth();
        }
        if (in instanceof InputType.InputTypeRecurrent) {
            return ((InputType.InputTypeRecurrent) in).getSize();
        }
        return null;
    }

    @Override
    protected void checkSettings(String who) {
        baseChecks(who);
        // nIn (and nOut, which follows it) are inferred and checked against the input by the engine.
        if (!(Double.isFinite(decay) && decay >= 0 && decay <= 1)) {
            throw invalid(who, "decay=" + decay + " is invalid (must be in [0, 1])");
        }
        if (!(Double.isFinite(eps) && eps > 0)) {
            throw invalid(who, "eps=" + eps + " is invalid (must be a finite number > 0)");
        }
        if (!(Double.isFinite(gamma) && Double.isFinite(beta))) {
            throw invalid(who, "gamma=" + gamma + " and beta=" + beta + " must be finite");
        }
    }

    @Override
    public BatchNormalization clone() {
        return (BatchNormalization) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        BatchNormalization b = (BatchNormalization) o;
        return Double.compare(decay, b.decay) == 0 && Double.compare(eps, b.eps) == 0
                && lockGammaBeta == b.lockGammaBeta && Double.compare(gamma, b.gamma) == 0
                && Double.compare(beta, b.beta) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), decay, eps, lockGammaBeta, gamma, beta);
    }

    /** Builder of {@link BatchNormalization}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Decay. */
        protected double decay = 0.9;
        /** Epsilon. */
        protected double eps = 1e-5;
        /** Lock gamma/beta. */
        protected boolean lockGammaBeta;
        /** Gamma. */
        protected double gamma = 1.0;
        /** Beta. */
        protected double beta;

        /** A builder with the defaults: decay 0.9, eps 1e-5, learned gamma (1.0) and beta (0.0). */
        public Builder() {
        }

        /**
         * @param gamma initial (or fixed) gamma
         * @param beta initial (or fixed) beta
         */
        public Builder(double gamma, double beta) {
            this.gamma = gamma;
            this.beta = beta;
        }

        /**
         * @param gamma initial (or fixed) gamma
         * @param beta initial (or fixed) beta
         * @param lockGammaBeta whether gamma and beta are fixed
         */
        public Builder(double gamma, double beta, boolean lockGammaBeta) {
            this(gamma, beta);
            this.lockGammaBeta = lockGammaBeta;
        }

        /** @param lockGammaBeta whether gamma and beta are fixed to 1.0 and 0.0 */
        public Builder(boolean lockGammaBeta) {
            this.lockGammaBeta = lockGammaBeta;
        }

        /**
         * Running statistics at inference: {@code mean = decay·mean + (1-decay)·batchMean} (same for
         * the variance) during training.
         *
         * @param decay decay in [0, 1] (default 0.9)
         * @return this builder
         */
        public Builder decay(double decay) {
            this.decay = decay;
            return this;
        }

        /**
         * @param eps added to the variance (default 1e-5)
         * @return this builder
         */
        public Builder eps(double eps) {
            this.eps = eps;
            return this;
        }

        /**
         * @param lockGammaBeta true: gamma and beta are fixed to {@link #gamma(double)} and
         *     {@link #beta(double)}; false (default): learned
         * @return this builder
         */
        public Builder lockGammaBeta(boolean lockGammaBeta) {
            this.lockGammaBeta = lockGammaBeta;
            return this;
        }

        /**
         * @param gamma gamma (default 1.0)
         * @return this builder
         */
        public Builder gamma(double gamma) {
            this.gamma = gamma;
            return this;
        }

        /**
         * @param beta beta (default 0.0)
         * @return this builder
         */
        public Builder beta(double beta) {
            this.beta = beta;
            return this;
        }

        @Override
        public BatchNormalization build() {
            return new BatchNormalization(this);
        }
    }
}
