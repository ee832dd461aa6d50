package org.ferrodl.nn.conf.layers;

import java.util.Objects;

/**
 * A layer with parameters and explicit sizes: {@code nIn} inputs (features, or channels for
 * convolutions) and {@code nOut} outputs. An unset {@code nIn} is inferred from
 * {@code setInputType(..)} at build time.
 */
public abstract class FeedForwardLayer extends BaseLayer {
    private static final long serialVersionUID = 1L;

    /** Number of inputs (features or channels). */
    protected Long nIn;
    /** Number of outputs (units or channels). */
    protected Long nOut;

    /** For deserialization and subclasses. */
    protected FeedForwardLayer() {
    }

    /** @param b builder to copy settings from */
    protected FeedForwardLayer(Builder<?> b) {
        super(b);
        this.nIn = b.nIn;
        this.nOut = b.nOut;
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

    /**
     * Checks nOut is set and positive, and a set nIn is not negative (an unset or 0 nIn is
     * inferred by the engine from the layer's input).
     */
    @Override
    protected void checkSettings(String who) {
        baseChecks(who);
        positive(who, "nOut", nOut, "set it with .nOut(..)");
        if (nIn != null && nIn < 0) {
            throw invalid(who, "nIn is " + nIn + " (must be at least 1)");
        }
    }

    /** The checks of {@link BaseLayer} (for subclasses whose sizes follow other rules). */
    protected final void baseChecks(String who) {
        super.checkSettings(who);
    }

    static void positive(String who, String field, Long v, String fix) {
        if (v == null) {
            throw invalid(who, field + " is not set; " + fix);
        }
        if (v <= 0) {
            throw invalid(who, field + " is " + v + " (must be at least 1)");
        }
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
        return Objects.equals(nIn, f.nIn) && Objects.equals(nOut, f.nOut);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), nIn, nOut);
    }

    /**
     * Builder of layers with sizes.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class Builder<T extends Builder<T>> extends BaseLayer.Builder<T> {
        /** Number of inputs. */
        protected Long nIn;
        /** Number of outputs. */
        protected Long nOut;

        /**
         * @param nIn number of inputs (features, or channels for convolutions); inferred from
         *     {@code setInputType(..)} when not set
         * @return this builder
         */
        public T nIn(long nIn) {
            this.nIn = nIn;
            return self();
        }

        /**
         * @param nOut number of outputs (units, or channels for convolutions)
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
    }
}
