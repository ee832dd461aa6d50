package org.ferrodl.nn.conf.layers;

import java.util.Objects;

/**
 * Pooling over all spatial positions of {@code [C, H, W]} activations, or all time steps of
 * {@code [C, L]}: the output has {@code C} values ({@code collapseDimensions}, the default) or keeps
 * unit spatial dimensions. Pooling type default MAX; {@code pnorm} 2. No parameters.
 *
 * <pre>{@code new GlobalPoolingLayer.Builder(PoolingType.AVG).build()}</pre>
 */
public class GlobalPoolingLayer extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** Pooling type. */
    protected PoolingType poolingType = PoolingType.MAX;
    /** P of PNORM pooling. */
    protected int pnorm = 2;
    /** Whether the output is {@code [C]} (true) or {@code [C, 1, 1]} / {@code [C, 1]} (false). */
    protected boolean collapseDimensions = true;

    /** For deserialization. */
    protected GlobalPoolingLayer() {
    }

    /** @param poolingType the pooling type */
    public GlobalPoolingLayer(PoolingType poolingType) {
        this(new Builder(poolingType));
    }

    /** @param b the builder */
    protected GlobalPoolingLayer(Builder b) {
        super(b);
        this.poolingType = b.poolingType;
        this.pnorm = b.pnorm;
        this.collapseDimensions = b.collapseDimensions;
    }

    /** @return the pooling type */
    public PoolingType getPoolingType() {
        return poolingType;
    }

    /** @param poolingType the pooling type */
    public void setPoolingType(PoolingType poolingType) {
        this.poolingType = poolingType;
    }

    /** @return p of PNORM pooling */
    public int getPnorm() {
        return pnorm;
    }

    /** @param pnorm p of PNORM pooling */
    public void setPnorm(int pnorm) {
        this.pnorm = pnorm;
    }

    /** @return whether the pooled dimensions are removed (default true) */
    public boolean isCollapseDimensions() {
        return collapseDimensions;
    }

    /** @param collapseDimensions whether the pooled dimensions are removed */
    public void setCollapseDimensions(boolean collapseDimensions) {
        this.collapseDimensions = collapseDimensions;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (poolingType == null) {
            throw missing(who, "poolingType");
        }
        if (poolingType == PoolingType.PNORM && pnorm < 1) {
            throw invalid(who, "pnorm=" + pnorm + " is invalid (must be at least 1)");
        }
    }

    @Override
    public GlobalPoolingLayer clone() {
        return (GlobalPoolingLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        GlobalPoolingLayer g = (GlobalPoolingLayer) o;
        return poolingType == g.poolingType && pnorm == g.pnorm && collapseDimensions == g.collapseDimensions;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), poolingType, pnorm, collapseDimensions);
    }

    /** Builder of {@link GlobalPoolingLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** Pooling type. */
        protected PoolingType poolingType = PoolingType.MAX;
        /** P of PNORM. */
        protected int pnorm = 2;
        /** Collapse the pooled dimensions. */
        protected boolean collapseDimensions = true;

        /** A builder with MAX pooling. */
        public Builder() {
        }

        /** @param poolingType the pooling type */
        public Builder(PoolingType poolingType) {
            this.poolingType = poolingType;
        }

        /**
         * @param poolingType the pooling type (default MAX)
         * @return this builder
         */
        public Builder poolingType(PoolingType poolingType) {
            this.poolingType = poolingType;
            return this;
        }

        /**
         * @param pnorm p of PNORM pooling (default 2)
         * @return this builder
         */
        public Builder pnorm(int pnorm) {
            this.pnorm = pnorm;
            return this;
        }

        /**
         * @param collapseDimensions true (default): output {@code [C]}; false: {@code [C, 1, 1]} or {@code [C, 1]}
         * @return this builder
         */
        public Builder collapseDimensions(boolean collapseDimensions) {
            this.collapseDimensions = collapseDimensions;
            return this;
        }

        @Override
        public GlobalPoolingLayer build() {
            return new GlobalPoolingLayer(this);
        }
    }
}
