package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.linalg.lossfunctions.ILossFunction;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.RNNFormat;

/**
 * The output layer of a sequence model: a fully connected layer applied at every time step
 * ({@code W [nIn, nOut]}, {@code b [nOut]}), its activation, and the loss at every unmasked step.
 * Labels are {@code [minibatch, nOut, timeSteps]} (NCW) with an optional {@code [minibatch, timeSteps]}
 * labels mask; the score is the sum over unmasked (example, step) pairs divided by the number of
 * examples (the reference's). Must be the last layer.
 *
 * <pre>{@code new RnnOutputLayer.Builder(LossFunction.MCXENT).nIn(200).nOut(77).activation(Activation.SOFTMAX).build()}</pre>
 */
public class RnnOutputLayer extends BaseOutputLayer {
    private static final long serialVersionUID = 1L;

    /** Layout of the input, output and labels. */
    protected RNNFormat rnnDataFormat = RNNFormat.NCW;

    /** For deserialization. */
    protected RnnOutputLayer() {
    }

    /** @param b the builder */
    protected RnnOutputLayer(Builder b) {
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
    public RnnOutputLayer clone() {
        return (RnnOutputLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((RnnOutputLayer) o).rnnDataFormat == rnnDataFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), rnnDataFormat);
    }

    /** Builder of {@link RnnOutputLayer}. */
    public static class Builder extends BaseOutputLayer.Builder<Builder> {
        /** Layout. */
        protected RNNFormat rnnDataFormat = RNNFormat.NCW;

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

        /**
         * @param format layout of input, output and labels: NCW (default) or NWC
         * @return this builder
         */
        public Builder dataFormat(RNNFormat format) {
            this.rnnDataFormat = Objects.requireNonNull(format, "format");
            return this;
        }

        @Override
        public RnnOutputLayer build() {
            return new RnnOutputLayer(this);
        }
    }
}
