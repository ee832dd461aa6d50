package org.ferrodl.nn.conf.layers.recurrent;

import java.util.Objects;
import org.ferrodl.nn.conf.layers.BaseRecurrentLayer;

/**
 * A simple ("vanilla") recurrent layer: {@code h_t = act(x_t·W + h_{t-1}·RW + b)}. Parameters
 * {@code W [nIn, nOut]}, {@code RW [nOut, nOut]}, {@code b [nOut]}; with {@code hasLayerNorm} also
 * the layer-normalization gains {@code gx [nOut]} and {@code gh [nOut]} applied to {@code x·W} and
 * {@code h·RW} (the reference's option, default off).
 *
 * <pre>{@code new SimpleRnn.Builder().nIn(8).nOut(16).activation(Activation.TANH).build()}</pre>
 */
public class SimpleRnn extends BaseRecurrentLayer {
    private static final long serialVersionUID = 1L;

    /** Whether {@code x·W} and {@code h·RW} are layer-normalized. */
    protected boolean hasLayerNorm;

    /** For deserialization. */
    protected SimpleRnn() {
    }

    /** @param b the builder */
    protected SimpleRnn(Builder b) {
        super(b);
        this.hasLayerNorm = b.hasLayerNorm;
    }

    /** @return whether the layer normalizes {@code x·W} and {@code h·RW} (default false) */
    public boolean hasLayerNorm() {
        return hasLayerNorm;
    }

    /** @return whether the layer normalizes {@code x·W} and {@code h·RW} (default false) */
    public boolean getHasLayerNorm() {
        return hasLayerNorm;
    }

    /** @param hasLayerNorm whether to layer-normalize */
    public void setHasLayerNorm(boolean hasLayerNorm) {
        this.hasLayerNorm = hasLayerNorm;
    }

    @Override
    public SimpleRnn clone() {
        return (SimpleRnn) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((SimpleRnn) o).hasLayerNorm == hasLayerNorm;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), hasLayerNorm);
    }

    /** Builder of {@link SimpleRnn}. */
    public static class Builder extends BaseRecurrentLayer.Builder<Builder> {
        /** Layer normalization on/off. */
        protected boolean hasLayerNorm;

        /** A builder without layer normalization. */
        public Builder() {
        }

        /**
         * @param hasLayerNorm layer-normalize {@code x·W} and {@code h·RW} (default false)
         * @return this builder
         */
        public Builder hasLayerNorm(boolean hasLayerNorm) {
            this.hasLayerNorm = hasLayerNorm;
            return this;
        }

        @Override
        public SimpleRnn build() {
            return new SimpleRnn(this);
        }
    }
}
