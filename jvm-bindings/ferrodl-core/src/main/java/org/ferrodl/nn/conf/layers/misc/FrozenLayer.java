package org.ferrodl.nn.conf.layers.misc;

import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.layers.Layer;

/**
 * Wraps a layer whose parameters never change (transfer learning): the wrapped layer carries the
 * configuration and runs in inference mode (no dropout, batch normalization with its running
 * statistics). The wrapper's own {@code dropOut} is 0 and the global dropout does not apply to it;
 * its name defaults to the wrapped layer's.
 *
 * <p>JSON: {@code {"type":"FrozenLayer","name":..,"dropOut":0.0,"layer":{...}}}.
 *
 * <pre>{@code new FrozenLayer(new DenseLayer.Builder().nIn(4).nOut(3).build())}</pre>
 */
public class FrozenLayer extends Layer {
    private static final long serialVersionUID = 1L;

    /** The wrapped layer. */
    protected Layer layer;

    /** For deserialization. */
    protected FrozenLayer() {
    }

    /** @param layer the layer to freeze */
    public FrozenLayer(Layer layer) {
        this(new Builder().layer(layer));
    }

    /** @param b the builder */
    protected FrozenLayer(Builder b) {
        super(b);
        if (b.layer == null) {
            throw new DL4JInvalidConfigException("FrozenLayer: the layer to freeze is not set (use .layer(..))");
        }
        if (b.layer instanceof FrozenLayer) {
            throw new DL4JInvalidConfigException("FrozenLayer: a FrozenLayer cannot wrap another FrozenLayer");
        }
        this.layer = b.layer.clone();
        if (this.name == null) {
            this.name = layer.getLayerName();
        }
        if (this.dropOut == null) {
            this.dropOut = 0.0;
        }
    }

    /** @return the wrapped layer (live) */
    public Layer getLayer() {
        return layer;
    }

    /** @param layer the wrapped layer */
    public void setLayer(Layer layer) {
        this.layer = layer;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (layer == null) {
            throw missing(who, "layer");
        }
        if (layer instanceof FrozenLayer) {
            throw invalid(who, "a FrozenLayer cannot wrap another FrozenLayer");
        }
    }

    @Override
    public FrozenLayer clone() {
        FrozenLayer c = (FrozenLayer) super.clone();
        c.layer = layer == null ? null : layer.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && Objects.equals(((FrozenLayer) o).layer, layer);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), layer);
    }

    /** Builder of {@link FrozenLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** The layer to freeze. */
        protected Layer layer;

        /** An empty builder; set the layer with {@link #layer(Layer)}. */
        public Builder() {
        }

        /**
         * @param layer the layer to freeze (copied)
         * @return this builder
         */
        public Builder layer(Layer layer) {
            this.layer = layer;
            return this;
        }

        @Override
        public FrozenLayer build() {
            return new FrozenLayer(this);
        }
    }
}
