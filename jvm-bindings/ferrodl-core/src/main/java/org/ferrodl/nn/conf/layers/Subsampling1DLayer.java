package org.ferrodl.nn.conf.layers;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;
import org.ferrodl.nn.conf.ConvolutionMode;

/**
 * 1D pooling of recurrent activations {@code [C, L]} along the sequence, per channel: pooling type
 * (default MAX), window {@code kernelSize} (default 2), stride (1), padding (0), dilation (1) — the
 * reference's defaults for this layer. No parameters.
 *
 * <pre>{@code new Subsampling1DLayer.Builder(PoolingType.MAX).kernelSize(2).stride(2).build()}</pre>
 */
@JsonPropertyOrder({"name", "dropOut", "poolingType", "kernelSize", "stride", "padding", "dilation",
    "convolutionMode", "pnorm", "eps"})
public class Subsampling1DLayer extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** Pooling type. */
    protected PoolingType poolingType = PoolingType.MAX;
    /** Window length. */
    protected int kernelSize = 2;
    /** Stride. */
    protected int stride = 1;
    /** Padding on both ends. */
    protected int padding;
    /** Dilation. */
    protected int dilation = 1;
    /** Convolution mode, or null for the global one. */
    protected ConvolutionMode convolutionMode;
    /** P of PNORM pooling. */
    protected int pnorm = 2;
    /** Epsilon of PNORM pooling. */
    protected double eps = 1e-8;

    /** For deserialization. */
    protected Subsampling1DLayer() {
    }

    /** @param b the builder */
    protected Subsampling1DLayer(Builder b) {
        super(b);
        this.poolingType = b.poolingType;
        this.kernelSize = b.kernelSize;
        this.stride = b.stride;
        this.padding = b.padding;
        this.dilation = b.dilation;
        this.convolutionMode = b.convolutionMode;
        this.pnorm = b.pnorm;
        this.eps = b.eps;
    }

    /** @return the pooling type */
    public PoolingType getPoolingType() {
        return poolingType;
    }

    /** @param poolingType the pooling type */
    public void setPoolingType(PoolingType poolingType) {
        this.poolingType = poolingType;
    }

    /** @return the window length */
    public int getKernelSize() {
        return kernelSize;
    }

    /** @param kernelSize the window length */
    public void setKernelSize(int kernelSize) {
        this.kernelSize = kernelSize;
    }

    /** @return the stride */
    public int getStride() {
        return stride;
    }

    /** @param stride the stride */
    public void setStride(int stride) {
        this.stride = stride;
    }

    /** @return the padding */
    public int getPadding() {
        return padding;
    }

    /** @param padding the padding */
    public void setPadding(int padding) {
        this.padding = padding;
    }

    /** @return the dilation */
    public int getDilation() {
        return dilation;
    }

    /** @param dilation the dilation */
    public void setDilation(int dilation) {
        this.dilation = dilation;
    }

    /** @return the convolution mode, or null when unset (the global one applies) */
    public ConvolutionMode getConvolutionMode() {
        return convolutionMode;
    }

    /** @param convolutionMode the convolution mode */
    public void setConvolutionMode(ConvolutionMode convolutionMode) {
        this.convolutionMode = convolutionMode;
    }

    /** @return p of PNORM pooling */
    public int getPnorm() {
        return pnorm;
    }

    /** @param pnorm p of PNORM pooling */
    public void setPnorm(int pnorm) {
        this.pnorm = pnorm;
    }

    /** @return epsilon of PNORM pooling */
    public double getEps() {
        return eps;
    }

    /** @param eps epsilon of PNORM pooling */
    public void setEps(double eps) {
        this.eps = eps;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (poolingType == null) {
            throw missing(who, "poolingType");
        }
        WindowSettings.atLeast(who, "kernelSize", new int[] {kernelSize}, 1, 1);
        WindowSettings.atLeast(who, "stride", new int[] {stride}, 1, 1);
        WindowSettings.atLeast(who, "padding", new int[] {padding}, 0, 1);
        WindowSettings.atLeast(who, "dilation", new int[] {dilation}, 1, 1);
        WindowSettings.checkMode(who, convolutionMode, true);
        SubsamplingLayer.checkPnorm(who, poolingType, pnorm, eps);
    }

    @Override
    public Subsampling1DLayer clone() {
        return (Subsampling1DLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        Subsampling1DLayer s = (Subsampling1DLayer) o;
        return poolingType == s.poolingType && kernelSize == s.kernelSize && stride == s.stride
                && padding == s.padding && dilation == s.dilation && convolutionMode == s.convolutionMode
                && pnorm == s.pnorm && Double.compare(eps, s.eps) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), poolingType, kernelSize, stride, padding, dilation, convolutionMode,
                pnorm, eps);
    }

    /** Builder of {@link Subsampling1DLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** Pooling type. */
        protected PoolingType poolingType = PoolingType.MAX;
        /** Window length. */
        protected int kernelSize = 2;
        /** Stride. */
        protected int stride = 1;
        /** Padding. */
        protected int padding;
        /** Dilation. */
        protected int dilation = 1;
        /** Convolution mode (null: the global one). */
        protected ConvolutionMode convolutionMode;
        /** P of PNORM. */
        protected int pnorm = 2;
        /** Epsilon of PNORM. */
        protected double eps = 1e-8;

        /** A builder with MAX pooling, window 2, stride 1, padding 0. */
        public Builder() {
        }

        /** @param poolingType the pooling type */
        public Builder(PoolingType poolingType) {
            poolingType(poolingType);
        }

        /** @param poolingType the pooling type */
        public Builder(SubsamplingLayer.PoolingType poolingType) {
            poolingType(poolingType);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window length
         */
        public Builder(PoolingType poolingType, int kernelSize) {
            this(poolingType);
            this.kernelSize = kernelSize;
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window length
         * @param stride stride
         */
        public Builder(PoolingType poolingType, int kernelSize, int stride) {
            this(poolingType, kernelSize);
            this.stride = stride;
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window length
         * @param stride stride
         * @param padding padding
         */
        public Builder(PoolingType poolingType, int kernelSize, int stride, int padding) {
            this(poolingType, kernelSize, stride);
            this.padding = padding;
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window length
         */
        public Builder(SubsamplingLayer.PoolingType poolingType, int kernelSize) {
            this(poolingType.toPoolingType(), kernelSize);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window length
         * @param stride stride
         */
        public Builder(SubsamplingLayer.PoolingType poolingType, int kernelSize, int stride) {
            this(poolingType.toPoolingType(), kernelSize, stride);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window length
         * @param stride stride
         * @param padding padding
         */
        public Builder(SubsamplingLayer.PoolingType poolingType, int kernelSize, int stride, int padding) {
            this(poolingType.toPoolingType(), kernelSize, stride, padding);
        }

        /** @param kernelSize window length (MAX pooling) */
        public Builder(int kernelSize) {
            this.kernelSize = kernelSize;
        }

        /**
         * @param kernelSize window length (MAX pooling)
         * @param stride stride
         */
        public Builder(int kernelSize, int stride) {
            this(kernelSize);
            this.stride = stride;
        }

        /**
         * @param kernelSize window length (MAX pooling)
         * @param stride stride
         * @param padding padding
         */
        public Builder(int kernelSize, int stride, int padding) {
            this(kernelSize, stride);
            this.padding = padding;
        }

        /**
         * @param poolingType the pooling type
         * @return this builder
         */
        public Builder poolingType(PoolingType poolingType) {
            this.poolingType = poolingType;
            return this;
        }

        /**
         * @param poolingType the pooling type
         * @return this builder
         */
        public Builder poolingType(SubsamplingLayer.PoolingType poolingType) {
            this.poolingType = poolingType == null ? null : poolingType.toPoolingType();
            return this;
        }

        /**
         * @param kernelSize window length (default 2)
         * @return this builder
         */
        public Builder kernelSize(int kernelSize) {
            this.kernelSize = kernelSize;
            return this;
        }

        /**
         * @param stride stride (default 1)
         * @return this builder
         */
        public Builder stride(int stride) {
            this.stride = stride;
            return this;
        }

        /**
         * @param padding padding on both ends (default 0)
         * @return this builder
         */
        public Builder padding(int padding) {
            this.padding = padding;
            return this;
        }

        /**
         * @param dilation dilation (default 1)
         * @return this builder
         */
        public Builder dilation(int dilation) {
            this.dilation = dilation;
            return this;
        }

        /**
         * @param convolutionMode the convolution mode (default: the network's, Truncate; Causal allowed)
         * @return this builder
         */
        public Builder convolutionMode(ConvolutionMode convolutionMode) {
            this.convolutionMode = convolutionMode;
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
         * @param eps epsilon of PNORM pooling (default 1e-8)
         * @return this builder
         */
        public Builder eps(double eps) {
            this.eps = eps;
            return this;
        }

        @Override
        public Subsampling1DLayer build() {
            return new Subsampling1DLayer(this);
        }
    }
}
