package org.ferrodl.nn.conf.layers;

import java.util.Objects;

/**
 * A fully connected feed-forward layer: {@code nIn} inputs, {@code nOut} outputs, optional bias.
 */
public abstract class FeedForwardLayer extends BaseLayer {
    private static final long serialVersionUID = 1L;

    /** Number of inputs. */
    protected Long nIn;
    /** Number of outputs. */
    protected Long nOut;
    /** Whether the layer has a bias vector. */
    protected Boolean hasBias;

    /** For deserialization and subclasses. */
    protected FeedForwardLayer() {
    }

    /** @param b builder to copy settings from */
    protected FeedForwardLayer(Builder<?> b) {
        super(b);
        this.nIn = b.nIn;
        this.nOut = b.nOut;
        this.hasBias = b.hasBias;
    }

    /** @return number of inputs, or null when unset */
    public Long getNIn() {
        return nIn;
    }

    /** @param nIn number of inputs */
    public void setNIn(Long nIn) {
        this.nIn = nIn;
    }

    /** @return number of outputs, or null when unset */
    public Long getNOut() {
        return nOut;
    }

    /** @param nOut number of outputs */
    public void setNOut(Long nOut) {
        this.nOut = nOut;
    }

    /** @return whether the layer has a bias, or null when unset (default true) */
    public Boolean getHasBias() {
        return hasBias;
    }

    /** @param hasBias whether the layer has a bias */
    public void setHasBias(Boolean hasBias) {
        this.hasBias = hasBias;
    }

    @Override
    public FeedForwardLayer clone() {
        return (FeedForwardLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        FeedForwardLayer f = (FeedForwardLayer) o;
        return Objects.equals(nIn, f.nIn) && Objects.equals(nOut, f.nOut) && Objects.equals(hasBias, f.hasBias);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), nIn, nOut, hasBias);
    }

    /**
     * Builder of feed-forward layers.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class Builder<T extends Builder<T>> extends BaseLayer.Builder<T> {
        /** Number of inputs. */
        protected Long nIn;
        /** Number of outputs. */
        protected Long nOut;
        /** Bias on/off. */
        protected Boolean hasBias;

        /**
         * @param nIn number of inputs
         * @return this builder
         */
        public T nIn(long nIn) {
            this.nIn = nIn;
            return self();
        }

        /**
         * @param nOut number of outputs
         * @return this builder
         */
        public T nOut(long nOut) {
            this.nOut = nOut;
            return self();
        }

        /**
         * @param units number of outputs (same as {@link #nOut(long)})
         * @return this builder
         */
        public T units(long units) {
            return nOut(units);
        }

        /**
         * @param hasBias whether the layer has a bias vector (default true)
         * @return this builder
         */
        public T hasBias(boolean hasBias) {
            this.hasBias = hasBias;
            return self();
        }
    }
}
