package org.ferrodl.nn.conf.layers.wrapper;

import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.layers.Layer;

/**
 * A layer that wraps another ({@code underlying}) and changes how it sees its input or what it
 * outputs: {@link org.ferrodl.nn.conf.layers.recurrent.LastTimeStep},
 * {@link org.ferrodl.nn.conf.layers.util.MaskZeroLayer},
 * {@link org.ferrodl.nn.conf.layers.recurrent.TimeDistributed}. The parameters are the underlying
 * layer's; the global settings are resolved into the underlying layer. The wrapper's own
 * {@code dropOut} defaults to 0 (the underlying layer applies the input dropout) and its name to the
 * underlying layer's. JSON: {@code {"type":..,"name":..,"dropOut":..,"underlying":{...}}}.
 */
public abstract class BaseWrapperLayer extends Layer {
    private static final long serialVersionUID = 1L;

    /** The wrapped layer. */
    protected Layer underlying;

    /** For deserialization. */
    protected BaseWrapperLayer() {
    }

    /**
     * @param b the builder (name, dropOut)
     * @param underlying the wrapped layer (copied)
     */
    protected BaseWrapperLayer(Layer.Builder<?> b, Layer underlying) {
        super(b);
        if (underlying == null) {
            throw new DL4JInvalidConfigException(getClass().getSimpleName() + ": the layer to wrap is not set");
        }
        String problem = wrapProblem(underlying);
        if (problem != null) {
            throw new DL4JInvalidConfigException(getClass().getSimpleName() + ": " + problem);
        }
        this.underlying = underlying.clone();
        if (this.name == null) {
            this.name = underlying.getLayerName();
        }
        if (this.dropOut == null) {
            this.dropOut = 0.0;
        }
    }

    /**
     * @param l a layer to wrap
     * @return why this wrapper cannot wrap {@code l}, or null when it can
     */
    protected abstract String wrapProblem(Layer l);

    /** @return the wrapped layer (live) */
    public Layer getUnderlying() {
        return underlying;
    }

    /** @param underlying the wrapped layer */
    public void setUnderlying(Layer underlying) {
        this.underlying = underlying;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (underlying == null) {
            throw missing(who, "underlying");
        }
        String problem = wrapProblem(underlying);
        if (problem != null) {
            throw invalid(who, problem);
        }
    }

    @Override
    public BaseWrapperLayer clone() {
        BaseWrapperLayer c = (BaseWrapperLayer) super.clone();
        c.underlying = underlying == null ? null : underlying.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && Objects.equals(((BaseWrapperLayer) o).underlying, underlying);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), underlying);
    }
}
