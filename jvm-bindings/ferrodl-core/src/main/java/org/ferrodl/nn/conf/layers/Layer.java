package org.ferrodl.nn.conf.layers;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import java.util.Objects;

/**
 * Base class of layer configurations. Serialized to JSON with a {@code "type"} property naming the
 * concrete class ({@code DenseLayer}, {@code OutputLayer}); see docs/ARCHITECTURE.md §2 for the exact
 * field set.
 *
 * <p>Settings left unset ({@code null}) in a layer are filled from the global values of
 * {@link org.ferrodl.nn.conf.NeuralNetConfiguration.Builder} when the configuration is built. Layer
 * configurations are mutable and not thread-safe.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = DenseLayer.class, name = "DenseLayer"),
    @JsonSubTypes.Type(value = OutputLayer.class, name = "OutputLayer")
})
@JsonPropertyOrder({"name", "nIn", "nOut", "activation", "weightInit", "biasInit", "hasBias", "l1", "l2",
    "l1Bias", "l2Bias", "updater", "biasUpdater", "lossFunction"})
public abstract class Layer implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** Optional layer name (may be null). */
    protected String name;

    /** For deserialization and subclasses. */
    protected Layer() {
    }

    /** @param builder the builder to copy settings from */
    protected Layer(Builder<?> builder) {
        this.name = builder.name;
    }

    /** @return the layer name, or null */
    public String getLayerName() {
        return name;
    }

    /** @param name the layer name, or null */
    public void setLayerName(String name) {
        this.name = name;
    }

    /** @return a deep copy of this layer configuration */
    @Override
    public Layer clone() {
        try {
            return (Layer) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && Objects.equals(((Layer) o).name, name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass().getSimpleName(), name);
    }

    /**
     * Base builder of all layers.
     *
     * @param <T> the concrete builder type, for chaining
     */
    public abstract static class Builder<T extends Builder<T>> {
        /** Layer name. */
        protected String name;

        /**
         * @param layerName the layer's name
         * @return this builder
         */
        public T name(String layerName) {
            this.name = layerName;
            return self();
        }

        /** @return this builder, typed */
        @SuppressWarnings("unchecked")
        protected T self() {
            return (T) this;
        }

        /** @return the layer configuration */
        public abstract Layer build();
    }
}
