package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.nn.conf.RNNFormat;

/**
 * A lookup table applied at every time step (the reference's {@code EmbeddingSequenceLayer}): the
 * input is a sequence of integer indices in {@code [0, nIn)} per example ({@code [minibatch,
 * inputLength]} or {@code [minibatch, 1, inputLength]}), the output the {@code nOut} embedding values
 * of each index, {@code [minibatch, nOut, inputLength]} (NCW, or NWC with {@code outputDataFormat}).
 * {@code nIn} is the vocabulary size (never inferred); no bias by default. With
 * {@code inferInputLength} (default true) the sequence length is taken from each minibatch, else it
 * must equal {@code inputLength}.
 *
 * <pre>{@code new EmbeddingSequenceLayer.Builder().nIn(5000).nOut(64).build()}</pre>
 */
public class EmbeddingSequenceLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Whether the layer has a bias vector. */
    protected boolean hasBias;
    /** The sequence length, used when it is not inferred. */
    protected int inputLength = 1;
    /** Whether the sequence length comes from each minibatch. */
    protected boolean inferInputLength = true;
    /** Layout of the output. */
    protected RNNFormat outputFormat = RNNFormat.NCW;

    /** For deserialization. */
    protected EmbeddingSequenceLayer() {
    }

    /** @param b the builder */
    protected EmbeddingSequenceLayer(Builder b) {
        super(b);
        this.hasBias = b.hasBias;
        this.inputLength = b.inputLength;
        this.inferInputLength = b.inferInputLength;
        this.outputFormat = b.outputFormat;
    }

    /** @return whether the layer has a bias vector (default false) */
    public boolean hasBias() {
        return hasBias;
    }

    /** @return whether the layer has a bias vector (default false) */
    public boolean getHasBias() {
        return hasBias;
    }

    /** @param hasBias whether the layer has a bias vector */
    public void setHasBias(boolean hasBias) {
        this.hasBias = hasBias;
    }

    /** @return the sequence length used when it is not inferred (default 1) */
    public int getInputLength() {
        return inputLength;
    }

    /** @param inputLength the sequence length */
    public void setInputLength(int inputLength) {
        this.inputLength = inputLength;
    }

    /** @return whether the sequence length is taken from each minibatch (default true) */
    public boolean isInferInputLength() {
        return inferInputLength;
    }

    /** @param inferInputLength whether the sequence length is taken from each minibatch */
    public void setInferInputLength(boolean inferInputLength) {
        this.inferInputLength = inferInputLength;
    }

    /** @return the layout of the output (default NCW) */
    public RNNFormat getOutputFormat() {
        return outputFormat;
    }

    /** @param outputFormat the layout of the output */
    public void setOutputFormat(RNNFormat outputFormat) {
        this.outputFormat = outputFormat;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        // nIn is the vocabulary size: never inferred, so required here.
        positive(who, "nIn", nIn, "set it with .nIn(..) (the vocabulary size)");
        if (inputLength <= 0) {
            throw invalid(who, "inputLength is " + inputLength + " (must be at least 1)");
        }
        if (outputFormat == null) {
            throw missing(who, "outputFormat");
        }
    }

    @Override
    public EmbeddingSequenceLayer clone() {
        return (EmbeddingSequenceLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        EmbeddingSequenceLayer e = (EmbeddingSequenceLayer) o;
        return hasBias == e.hasBias && inputLength == e.inputLength && inferInputLength == e.inferInputLength
                && outputFormat == e.outputFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), hasBias, inputLength, inferInputLength, outputFormat);
    }

    /** Builder of {@link EmbeddingSequenceLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Bias on/off. */
        protected boolean hasBias;
        /** Sequence length. */
        protected int inputLength = 1;
        /** Infer the length. */
        protected boolean inferInputLength = true;
        /** Output layout. */
        protected RNNFormat outputFormat = RNNFormat.NCW;

        /** A builder without bias, inferring the sequence length, NCW output. */
        public Builder() {
        }

        /**
         * @param hasBias whether the layer has a bias vector (default false)
         * @return this builder
         */
        public Builder hasBias(boolean hasBias) {
            this.hasBias = hasBias;
            return this;
        }

        /**
         * @param inputLength the sequence length (default 1), used when it is not inferred
         * @return this builder
         */
        public Builder inputLength(int inputLength) {
            this.inputLength = inputLength;
            return this;
        }

        /**
         * @param inferInputLength true (default): the sequence length comes from each minibatch
         * @return this builder
         */
        public Builder inferInputLength(boolean inferInputLength) {
            this.inferInputLength = inferInputLength;
            return this;
        }

        /**
         * @param format layout of the output: NCW (default) or NWC
         * @return this builder
         */
        public Builder outputDataFormat(RNNFormat format) {
            this.outputFormat = Objects.requireNonNull(format, "format");
            return this;
        }

        @Override
        public EmbeddingSequenceLayer build() {
            return new EmbeddingSequenceLayer(this);
        }
    }
}
