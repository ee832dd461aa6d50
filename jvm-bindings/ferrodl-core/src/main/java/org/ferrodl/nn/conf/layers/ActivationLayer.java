package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.linalg.activations.Activation;

/**
 * Applies an activation function element-wise (no parameters); the output has the input's shape.
 * Without an activation of its own it takes the network's global activation, as in the reference.
 *
 * <pre>{@code new ActivationLayer.Builder().activation(Activation.RELU).build()}</pre>
 */
public class ActivationLayer extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** Activation function. */
    protected Activation activation;

    /** For deserialization. */
    protected ActivationLayer() {
    }

    /** @param activation the activation function */
    public ActivationLayer(Activation activation) {
        this(new Builder().activation(activation));
    }

    /** @param b the builder */
    protected ActivationLayer(Builder b) {
        super(b);
        this.activation = b.activation;
    }

    /** @return the activation function, or null when unset */
    public Activation getActivation() {
        return activation;
    }

    /** @param activation the activation function */
    public void setActivation(Activation activation) {
        this.activation = activation;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (activation == null) {
            throw missing(who, "activation");
        }
    }

    @Override
    public ActivationLayer clone() {
        return (ActivationLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((ActivationLayer) o).activation == activation;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), activation);
    }

    /** Builder of {@link ActivationLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** Activation function. */
        protected Activation activation;

        /** A builder without activation (the global one applies). */
        public Builder() {
        }

        /**
         * @param activation the activation function
         * @return this builder
         */
        public Builder activation(Activation activation) {
            this.activation = activation;
            return this;
        }

        @Override
        public ActivationLayer build() {
            return new ActivationLayer(this);
        }
    }
}
