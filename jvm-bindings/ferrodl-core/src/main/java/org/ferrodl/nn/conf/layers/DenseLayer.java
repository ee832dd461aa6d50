package org.ferrodl.nn.conf.layers;

/**
 * Fully connected layer: {@code a = act(x·W + b)} with {@code W} of shape {@code nIn × nOut}.
 *
 * <pre>{@code new DenseLayer.Builder().nIn(784).nOut(100).activation(Activation.RELU).build()}</pre>
 */
public class DenseLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** For deserialization. */
    protected DenseLayer() {
    }

    /** @param b the builder */
    protected DenseLayer(Builder b) {
        super(b);
    }

    @Override
    public DenseLayer clone() {
        return (DenseLayer) super.clone();
    }

    @Override
    public String toString() {
        return "DenseLayer(name=" + name + ", nIn=" + nIn + ", nOut=" + nOut + ", activation=" + activation + ")";
    }

    /** Builder of {@link DenseLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** A builder with every setting unset. */
        public Builder() {
        }

        @Override
        public DenseLayer build() {
            return new DenseLayer(this);
        }
    }
}
