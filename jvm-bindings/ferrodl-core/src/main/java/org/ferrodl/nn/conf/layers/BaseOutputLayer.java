package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.linalg.lossfunctions.ILossFunction;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * A fully connected layer that ends the network with a loss function (default
 * {@link LossFunction#MCXENT}), optionally weighted per output ({@code lossWeights}).
 */
public abstract class BaseOutputLayer extends FeedForwardLayer implements LayerWithLoss {
    private static final long serialVersionUID = 1L;

    /** Whether the layer has a bias vector. */
    protected boolean hasBias = true;
    /** Loss function. */
    protected LossFunction lossFunction;
    /** Per-output weights of the loss, or null. */
    protected double[] lossWeights;

    /** For deserialization and subclasses. */
    protected BaseOutputLayer() {
    }

    /** @param b the builder */
    protected BaseOutputLayer(Builder<?> b) {
        super(b);
        this.hasBias = b.hasBias;
        this.lossFunction = b.lossFunction;
        this.lossWeights = b.lossWeights == null ? null : b.lossWeights.clone();
    }

    /** @return whether the layer has a bias vector (default true) */
    public boolean getHasBias() {
        return hasBias;
    }

    /** @return whether the layer has a bias vector (default true) */
    public boolean hasBias() {
        return hasBias;
    }

    /** @param hasBias whether the layer has a bias vector */
    public void setHasBias(boolean hasBias) {
        this.hasBias = hasBias;
    }

    @Override
    public LossFunction getLossFunction() {
        return lossFunction;
    }

    /** @param lossFunction the loss function */
    public void setLossFunction(LossFunction lossFunction) {
        this.lossFunction = lossFunction;
    }

    @Override
    public double[] getLossWeights() {
        return lossWeights == null ? null : lossWeights.clone();
    }

    /** @param lossWeights per-output weights of the loss, or null */
    public void setLossWeights(double[] lossWeights) {
        this.lossWeights = lossWeights == null ? null : lossWeights.clone();
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (lossFunction == null) {
            throw missing(who, "lossFunction");
        }
    }

    @Override
    public BaseOutputLayer clone() {
        BaseOutputLayer c = (BaseOutputLayer) super.clone();
        c.lossWeights = lossWeights == null ? null : lossWeights.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        BaseOutputLayer b = (BaseOutputLayer) o;
        return hasBias == b.hasBias && lossFunction == b.lossFunction && Arrays.equals(lossWeights, b.lossWeights);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), hasBias, lossFunction, Arrays.hashCode(lossWeights));
    }

    /**
     * Builder of output layers.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class Builder<T extends Builder<T>> extends FeedForwardLayer.Builder<T> {
        /** Bias on/off. */
        protected boolean hasBias = true;
        /** Loss function. */
        protected LossFunction lossFunction = LossFunction.MCXENT;
        /** Loss weights. */
        protected double[] lossWeights;

        /**
         * @param hasBias whether the layer has a bias vector (default true)
         * @return this builder
         */
        public T hasBias(boolean hasBias) {
            this.hasBias = hasBias;
            return self();
        }

        /**
         * @param lossFunction the loss function (default MCXENT); clears loss weights set before
         * @return this builder
         */
        public T lossFunction(LossFunction lossFunction) {
            this.lossFunction = lossFunction;
            this.lossWeights = null;
            return self();
        }

        /**
         * @param lossFunction a loss function object, e.g. {@code new LossMCXENT(weights)}: its
         *     computation and its per-output weights
         * @return this builder
         */
        public T lossFn(ILossFunction lossFunction) {
            this.lossFunction = lossFunction.getLossFunction();
            this.lossWeights = lossFunction.getWeights();
            return self();
        }
    }
}
