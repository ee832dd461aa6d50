package org.ferrodl.nn.conf.layers;

import org.ferrodl.linalg.lossfunctions.ILossFunction;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * Fully connected output layer with a loss function (default {@link LossFunction#MCXENT}); must be
 * the last layer.
 *
 * <pre>{@code new OutputLayer.Builder(LossFunction.MCXENT).nIn(100).nOut(10).activation(Activation.SOFTMAX).build()}</pre>
 */
public class OutputLayer extends BaseOutputLayer {
    private static final long serialVersionUID = 1L;

    /** For deserialization. */
    protected OutputLayer() {
    }

    /** @param b the builder */
    protected OutputLayer(Builder b) {
        super(b);
    }

    @Override
    public OutputLayer clone() {
        return (OutputLayer) super.clone();
    }

    /** Builder of {@link OutputLayer}. */
    public static class Builder extends BaseOutputLayer.Builder<Builder> {

        /** A builder with loss function MCXENT. */
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
        public OutputLayer build() {
            return new OutputLayer(this);
        }
    }
}
