package org.ferrodl.nn.conf.layers;

/**
 * A layer without parameters (pooling, padding, activation, dropout, loss): nothing to initialize,
 * regularize or update.
 */
public abstract class NoParamLayer extends Layer {
    private static final long serialVersionUID = 1L;

    /** For deserialization and subclasses. */
    protected NoParamLayer() {
    }

    /** @param builder the builder to copy settings from */
    protected NoParamLayer(Builder<?> builder) {
        super(builder);
    }

    @Override
    public NoParamLayer clone() {
        return (NoParamLayer) super.clone();
    }
}
