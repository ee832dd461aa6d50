package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.lossfunctions.ILossFunction;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * An output layer without parameters: applies its activation (default {@link Activation#IDENTITY})
 * to the previous layer's output and the loss function (default {@link LossFunction#MCXENT}). Its
 * output has the size of its input; must be the last layer.
 *
 * <pre>{@code new LossLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).build()}</pre>
 */
public class LossLayer extends NoParamLayer implements LayerWithLoss {
    private static final long serialVersionUID = 1L;

    /** Activation function. */
    protected Activation activation;
    /** Loss function. */
    protected LossFunction lossFunction;
    /** Per-output weights of the loss, or null. */
    protected double[] lossWeights;

    /** For deserialization. */
    protected LossLayer() {
    }

    /** @param b the builder */
    protected LossLayer(BaseBuilder<?> b) {
        super(b);
        this.activation = b.activation;
        this.lossFunction = b.lossFunction;
        this.lossWeights = b.lossWeights == null ? null : b.lossWeights.clone();
    }

    /** @return the activation function */
    public Activation getActivation() {
        return activation;
    }

    /** @param activation the activation function */
    public void setActivation(Activation activation) {
        this.activation = activation;
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
        if (activation == null) {
            throw missing(who, "activation");
        }
        if (lossFunction == null) {
            throw missing(who, "lossFunction");
        }
    }

    @Override
    public LossLayer clone() {
        LossLayer c = (LossLayer) super.clone();
        c.lossWeights = lossWeights == null ? null : lossWeights.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        LossLayer l = (LossLayer) o;
        return activation == l.activation && lossFunction == l.lossFunction && Arrays.equals(lossWeights, l.lossWeights);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), activation, lossFunction, Arrays.hashCode(lossWeights));
    }

    /**
     * The settings of loss layers ({@link LossLayer}, {@link RnnLossLayer}): activation, loss function
     * and loss weights.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class BaseBuilder<T extends BaseBuilder<T>> extends Layer.Builder<T> {
        /** Activation function. */
        protected Activation activation = Activation.IDENTITY;
        /** Loss function. */
        protected LossFunction lossFunction = LossFunction.MCXENT;
        /** Loss weights. */
        protected double[] lossWeights;

        /**
         * @param activation the activation function (default IDENTITY)
         * @return this builder
         */
        public T activation(Activation activation) {
            this.activation = activation;
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
         * @param lossFunction a loss function object: its computation and per-output weights
         * @return this builder
         */
        public T lossFn(ILossFunction lossFunction) {
            this.lossFunction = lossFunction.getLossFunction();
            this.lossWeights = lossFunction.getWeights();
            return self();
        }
    }

    /** Builder of {@link LossLayer}. */
    public static class Builder extends BaseBuilder<Builder> {

        /** A builder with loss MCXENT and activation IDENTITY. */
        public Builder() {
        }

        /** @param lossFunction the loss function */
        public Builder(LossFunction lossFunction) {
            lossFunction(lossFunction);
        }

        /** @param lossFunction a loss function object, e.g. {@code new LossMCXENT(weights)} */
        public Builder(ILossFunction lossFunction) {
            lossFn(lossFunction);
        }

        @Override
        public LossLayer build() {
            return new LossLayer(this);
        }
    }
}
