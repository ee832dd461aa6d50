package org.ferrodl.nn.conf.layers;

import java.util.Objects;

/**
 * Fully connected layer: {@code a = act(x·W + b)} with {@code W} of shape {@code nIn × nOut}. After
 * a convolutional layer it takes the flattened activations ({@code nIn = C·H·W}).
 *
 * <pre>{@code new DenseLayer.Builder().nIn(784).nOut(100).activation(Activation.RELU).build()}</pre>
 */
public class DenseLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Whether the layer has a bias vector. */
    protected boolean hasBias = true;

    /** For deserialization. */
    protected DenseLayer() {
    }

    /** @param b the builder */
    protected DenseLayer(Builder b) {
        super(b);
        this.hasBias = b.hasBias;
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
    public DenseLayer clone() {
        return (DenseLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((DenseLayer) o).hasBias == hasBias;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), hasBias);
    }

    /** Builder of {@link DenseLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Bias on/off. */
        protected boolean hasBias = true;

        /** A builder with every setting unset (bias on). */
        public Builder() {
        }

        /**
         * @param hasBias whether the layer has a bias vector (default true)
         * @return this builder
         */
        public Builder hasBias(boolean hasBias) {
            this.hasBias = hasBias;
            return this;
        }

        @Override
        public DenseLayer build() {
            return new DenseLayer(this);
        }
    }
}
