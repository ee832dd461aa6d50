package org.ferrodl.nn.conf.layers.util;

import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.layers.wrapper.BaseWrapperLayer;

/**
 * Masks the time steps whose input values all equal {@code maskingValue} (default 0.0) before a
 * recurrent layer (the reference's {@code MaskZeroLayer}): the mask is derived from the input, so
 * zero-padded sequences need no explicit features mask.
 *
 * <pre>{@code new MaskZeroLayer(new LSTM.Builder().nIn(10).nOut(32).build(), 0.0)}</pre>
 */
public class MaskZeroLayer extends BaseWrapperLayer {
    private static final long serialVersionUID = 1L;

    /** The input value that marks a padded step. */
    protected double maskingValue;

    /** For deserialization. */
    protected MaskZeroLayer() {
    }

    /**
     * @param underlying the recurrent layer (copied)
     * @param maskingValue the value that marks a padded time step
     * @throws DL4JInvalidConfigException when it is not a recurrent layer
     */
    public MaskZeroLayer(Layer underlying, double maskingValue) {
        this(new Builder().underlying(underlying).maskValue(maskingValue));
    }

    /**
     * Masking value 0.
     *
     * @param underlying the recurrent layer (copied)
     */
    public MaskZeroLayer(Layer underlying) {
        this(underlying, 0.0);
    }

    /** @param b the builder */
    protected MaskZeroLayer(Builder b) {
        super(b, b.underlying);
        this.maskingValue = b.maskingValue;
        if (!Double.isFinite(maskingValue)) {
            throw new DL4JInvalidConfigException("MaskZeroLayer: maskingValue must be finite, got " + maskingValue);
        }
    }

    @Override
    protected String wrapProblem(Layer l) {
        return LayerWrappers.isRecurrent(l) ? null : "can only wrap a recurrent layer (LSTM, GravesLSTM, SimpleRnn, "
                + "or a Bidirectional around one), got " + l.getClass().getSimpleName();
    }

    /** @return the value that marks a padded time step (default 0) */
    public double getMaskingValue() {
        return maskingValue;
    }

    /** @param maskingValue the value that marks a padded time step */
    public void setMaskingValue(double maskingValue) {
        this.maskingValue = maskingValue;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (!Double.isFinite(maskingValue)) {
            throw invalid(who, "maskingValue must be finite, got " + maskingValue);
        }
    }

    @Override
    public MaskZeroLayer clone() {
        return (MaskZeroLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && Double.compare(((MaskZeroLayer) o).maskingValue, maskingValue) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), maskingValue);
    }

    /** Builder of {@link MaskZeroLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        private Layer underlying;
        private double maskingValue;

        /** A builder with masking value 0; set the layer with {@link #underlying(Layer)}. */
        public Builder() {
        }

        /**
         * @param underlying the recurrent layer to wrap
         * @return this builder
         */
        public Builder underlying(Layer underlying) {
            this.underlying = underlying;
            return this;
        }

        /**
         * @param underlying the recurrent layer to wrap
         * @return this builder
         * @see #underlying(Layer)
         */
        public Builder setUnderlying(Layer underlying) {
            return underlying(underlying);
        }

        /**
         * @param maskingValue the value that marks a padded time step (default 0)
         * @return this builder
         */
        public Builder maskValue(double maskingValue) {
            this.maskingValue = maskingValue;
            return this;
        }

        /**
         * @param maskingValue the value that marks a padded time step
         * @return this builder
         * @see #maskValue(double)
         */
        public Builder setMaskValue(double maskingValue) {
            return maskValue(maskingValue);
        }

        @Override
        public MaskZeroLayer build() {
            return new MaskZeroLayer(this);
        }
    }
}
