package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * Fully connected output layer with a loss function (default {@link LossFunction#MCXENT}).
 *
 * <pre>{@code new OutputLayer.Builder(LossFunction.MCXENT).nIn(100).nOut(10).activation(Activation.SOFTMAX).build()}</pre>
 */
public class OutputLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Loss function. */
    protected LossFunction lossFunction;

    /** For deserialization. */
    protected OutputLayer() {
    }

    /** @param b the builder */
    protected OutputLayer(Builder b) {
        super(b);
        this.lossFunction = b.lossFunction;
    }

    /** @return the loss function */
    public LossFunction getLossFunction() {
        return lossFunction;
    }

    /** @param lossFunction the loss function */
    public void setLossFunction(LossFunction lossFunction) {
        this.lossFunction = lossFunction;
    }

    @Override
    public OutputLayer clone() {
        return (OutputLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((OutputLayer) o).lossFunction == lossFunction;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), lossFunction);
    }

    @Override
    public String toString() {
        return "OutputLayer(name=" + name + ", nIn=" + nIn + ", nOut=" + nOut + ", activation=" + activation
                + ", lossFunction=" + lossFunction + ")";
    }

    /** Builder of {@link OutputLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Loss function. */
        protected LossFunction lossFunction = LossFunction.MCXENT;

        /** A builder with loss function MCXENT. */
        public Builder() {
        }

        /** @param lossFunction the loss function */
        public Builder(LossFunction lossFunction) {
            this.lossFunction = lossFunction;
        }

        /**
         * @param lossFunction the loss function
         * @return this builder
         */
        public Builder lossFunction(LossFunction lossFunction) {
            this.lossFunction = lossFunction;
            return this;
        }

        @Override
        public OutputLayer build() {
            return new OutputLayer(this);
        }
    }
}
