package org.ferrodl.nn.conf.layers;

import java.util.Objects;

/**
 * A lookup table: the input is one column of integer indices in {@code [0, nIn)} (nIn = vocabulary
 * size, never inferred), the output for index {@code i} is {@code act(W[i] + b)} with {@code nOut}
 * values. Mathematically a dense layer on one-hot input. No bias by default (as in the reference).
 *
 * <pre>{@code new EmbeddingLayer.Builder().nIn(10000).nOut(128).build()}</pre>
 */
public class EmbeddingLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Whether the layer has a bias vector. */
    protected boolean hasBias;

    /** For deserialization. */
    protected EmbeddingLayer() {
    }

    /** @param b the builder */
    protected EmbeddingLayer(Builder b) {
        super(b);
        this.hasBias = b.hasBias;
    }

    /** @return whether the layer has a bias vector (default false) */
    public boolean getHasBias() {
        return hasBias;
    }

    /** @return whether the layer has a bias vector (default false) */
    public boolean hasBias() {
        return hasBias;
    }

    /** @param hasBias whether the layer has a bias vector */
    public void setHasBias(boolean hasBias) {
        this.hasBias = hasBias;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        // nIn is the vocabulary size: never inferred, so required here.
        positive(who, "nIn", nIn, "set it with .nIn(..) (the vocabulary size)");
    }

    @Override
    public EmbeddingLayer clone() {
        return (EmbeddingLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((EmbeddingLayer) o).hasBias == hasBias;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), hasBias);
    }

    /** Builder of {@link EmbeddingLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Bias on/off. */
        protected boolean hasBias;

        /** A builder without bias. */
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

        @Override
        public EmbeddingLayer build() {
            return new EmbeddingLayer(this);
        }
    }
}
