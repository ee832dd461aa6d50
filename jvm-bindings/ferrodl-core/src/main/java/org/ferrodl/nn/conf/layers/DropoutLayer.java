package org.ferrodl.nn.conf.layers;


/**
 * Dropout as a layer of its own (no parameters): during training each activation is kept with
 * probability {@code dropOut} (inverted dropout); at inference it passes its input unchanged. Without
 * a probability of its own it takes the global {@code dropOut}.
 *
 * <pre>{@code new DropoutLayer.Builder(0.5).build()}</pre>
 */
public class DropoutLayer extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** For deserialization. */
    protected DropoutLayer() {
    }

    /** @param b the builder */
    protected DropoutLayer(Builder b) {
        super(b);
    }

    @Override
    public DropoutLayer clone() {
        return (DropoutLayer) super.clone();
    }

    /** Builder of {@link DropoutLayer}. */
    public static class Builder extends Layer.Builder<Builder> {

        /** A builder without retain probability (the global dropOut applies). */
        public Builder() {
        }

        /** @param dropOut retain probability of each activation, in [0, 1] */
        public Builder(double dropOut) {
            dropOut(dropOut);
        }

        @Override
        public DropoutLayer build() {
            return new DropoutLayer(this);
        }
    }
}
