package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.linalg.lossfunctions.ILossFunction;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.RNNFormat;

/**
 * The parameterless output layer of a sequence model (the reference's {@code RnnLossLayer}, the
 * recurrent counterpart of {@link LossLayer}): its activation (default IDENTITY) and loss at every
 * unmasked time step of the previous layer's {@code [minibatch, size, timeSteps]} output. Must be the
 * last layer.
 *
 * <pre>{@code new RnnLossLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).build()}</pre>
 */
public class RnnLossLayer extends LossLayer {
    private static final long serialVersionUID = 1L;

    /** Layout of the input, output and labels. */
    protected RNNFormat rnnDataFormat = RNNFormat.NCW;

    /** For deserialization. */
    protected RnnLossLayer() {
    }

    /** @param b the builder */
    protected RnnLossLayer(Builder b) {
        super(b);
        this.rnnDataFormat = b.rnnDataFormat;
    }

    /** @return the layout of input, output and labels (default NCW) */
    public RNNFormat getRnnDataFormat() {
        return rnnDataFormat;
    }

    /** @param rnnDataFormat the layout of input, output and labels */
    public void setRnnDataFormat(RNNFormat rnnDataFormat) {
        this.rnnDataFormat = rnnDataFormat;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (rnnDataFormat == null) {
            throw missing(who, "rnnDataFormat");
        }
    }

    @Override
    public RnnLossLayer clone() {
        return (RnnLossLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((RnnLossLayer) o).rnnDataFormat == rnnDataFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), rnnDataFormat);
    }

    /** Builder of {@link RnnLossLayer}. */
    public static class Builder extends LossLayer.BaseBuilder<Builder> {
        /** Layout. */
        protected RNNFormat rnnDataFormat = RNNFormat.NCW;

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

        /**
         * @param format layout of input, output and labels: NCW (default) or NWC
         * @return this builder
         */
        public Builder dataFormat(RNNFormat format) {
            this.rnnDataFormat = Objects.requireNonNull(format, "format");
            return this;
        }

        @Override
        public RnnLossLayer build() {
            return new RnnLossLayer(this);
        }
    }
}
