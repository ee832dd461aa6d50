package org.ferrodl.nn.conf.layers;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.nn.conf.ConvolutionMode;

/**
 * 2D pooling (subsampling) of {@code [C, H, W]} activations, per channel: {@link PoolingType} (default
 * MAX) over windows of {@code kernelSize} (default 1×1) with stride (2×2), padding (0×0) and dilation
 * (1×1); the output size follows the {@link ConvolutionMode} (default: the network's, Truncate).
 * No parameters.
 *
 * <pre>{@code new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build()}</pre>
 */
@JsonPropertyOrder({"name", "dropOut", "poolingType", "kernelSize", "stride", "padding", "dilation",
    "convolutionMode", "pnorm", "eps"})
public class SubsamplingLayer extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** The reference's pooling types of subsampling layers (same constants as {@link org.ferrodl.nn.conf.layers.PoolingType}). */
    public enum PoolingType {
        /** Maximum. */
        MAX,
        /** Mean. */
        AVG,
        /** Sum. */
        SUM,
        /** P-norm. */
        PNORM;

        /** @return the equivalent {@link org.ferrodl.nn.conf.layers.PoolingType} */
        public org.ferrodl.nn.conf.layers.PoolingType toPoolingType() {
            return org.ferrodl.nn.conf.layers.PoolingType.valueOf(name());
        }
    }

    /** Pooling type. */
    protected org.ferrodl.nn.conf.layers.PoolingType poolingType = org.ferrodl.nn.conf.layers.PoolingType.MAX;
    /** Window size {@code [kH, kW]}. */
    protected int[] kernelSize;
    /** Stride {@code [sH, sW]}. */
    protected int[] stride;
    /** Padding {@code [pH, pW]}. */
    protected int[] padding;
    /** Dilation {@code [dH, dW]}. */
    protected int[] dilation;
    /** Convolution mode, or null for the global one. */
    protected ConvolutionMode convolutionMode;
    /** P of PNORM pooling. */
    protected int pnorm = 2;
    /** Epsilon of PNORM pooling's gradient. */
    protected double eps = 1e-8;

    /** For deserialization. */
    protected SubsamplingLayer() {
    }

    /** @param b the builder */
    protected SubsamplingLayer(Builder b) {
        super(b);
        this.poolingType = b.poolingType;
        this.kernelSize = b.kernelSize.clone();
        this.stride = b.stride.clone();
        this.padding = b.padding.clone();
        this.dilation = b.dilation.clone();
        this.convolutionMode = b.convolutionMode;
        this.pnorm = b.pnorm;
        this.eps = b.eps;
    }

    /** @return the pooling type */
    public org.ferrodl.nn.conf.layers.PoolingType getPoolingType() {
        return poolingType;
    }

    /** @param poolingType the pooling type */
    public void setPoolingType(org.ferrodl.nn.conf.layers.PoolingType poolingType) {
        this.poolingType = poolingType;
    }

    /** @return a copy of the window size {@code [kH, kW]} */
    public int[] getKernelSize() {
        return kernelSize == null ? null : kernelSize.clone();
    }

    /** @param kernelSize window size */
    public void setKernelSize(int... kernelSize) {
        this.kernelSize = pair("SubsamplingLayer", "kernelSize", kernelSize);
    }

    /** @return a copy of the stride */
    public int[] getStride() {
        return stride == null ? null : stride.clone();
    }

    /** @param stride stride */
    public void setStride(int... stride) {
        this.stride = pair("SubsamplingLayer", "stride", stride);
    }

    /** @return a copy of the padding */
    public int[] getPadding() {
        return padding == null ? null : padding.clone();
    }

    /** @param padding padding */
    public void setPadding(int... padding) {
        this.padding = pair("SubsamplingLayer", "padding", padding);
    }

    /** @return a copy of the dilation */
    public int[] getDilation() {
        return dilation == null ? null : dilation.clone();
    }

    /** @param dilation dilation */
    public void setDilation(int... dilation) {
        this.dilation = pair("SubsamplingLayer", "dilation", dilation);
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
        WindowSettings.atLeast(who, "kernelSize", kernelSize, 1, 2);
        WindowSettings.atLeast(who, "stride", stride, 1, 2);
        WindowSettings.atLeast(who, "padding", padding, 0, 2);
        WindowSettings.atLeast(who, "dilation", dilation, 1, 2);
        WindowSettings.checkMode(who, convolutionMode, false);
        checkPnorm(who, poolingType, pnorm, eps);
    }

    static void checkPnorm(String who, org.ferrodl.nn.conf.layers.PoolingType type, int pnorm, double eps) {
        if (type == org.ferrodl.nn.conf.layers.PoolingType.PNORM && pnorm < 1) {
            throw invalid(who, "pnorm=" + pnorm + " is invalid (must be at least 1)");
        }
        if (!(Double.isFinite(eps) && eps > 0)) {
            throw invalid(who, "eps=" + eps + " is invalid (must be a finite number > 0)");
        }
    }

    @Override
    public SubsamplingLayer clone() {
        SubsamplingLayer c = (SubsamplingLayer) super.clone();
        c.kernelSize = kernelSize == null ? null : kernelSize.clone();
        c.stride = stride == null ? null : stride.clone();
        c.padding = padding == null ? null : padding.clone();
        c.dilation = dilation == null ? null : dilation.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        SubsamplingLayer s = (SubsamplingLayer) o;
        return poolingType == s.poolingType && Arrays.equals(kernelSize, s.kernelSize)
                && Arrays.equals(stride, s.stride) && Arrays.equals(padding, s.padding)
                && Arrays.equals(dilation, s.dilation) && convolutionMode == s.convolutionMode && pnorm == s.pnorm
                && Double.compare(eps, s.eps) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), poolingType, Arrays.hashCode(kernelSize), Arrays.hashCode(stride),
                Arrays.hashCode(padding), Arrays.hashCode(dilation), convolutionMode, pnorm, eps);
    }

    /** Builder of {@link SubsamplingLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** Pooling type. */
        protected org.ferrodl.nn.conf.layers.PoolingType poolingType = org.ferrodl.nn.conf.layers.PoolingType.MAX;
        /** Window size. */
        protected int[] kernelSize = {1, 1};
        /** Stride. */
        protected int[] stride = {2, 2};
        /** Padding. */
        protected int[] padding = {0, 0};
        /** Dilation. */
        protected int[] dilation = {1, 1};
        /** Convolution mode (null: the global one). */
        protected ConvolutionMode convolutionMode;
        /** P of PNORM. */
        protected int pnorm = 2;
        /** Epsilon of PNORM. */
        protected double eps = 1e-8;

        /** A builder with MAX pooling, kernel 1×1, stride 2×2, padding 0×0. */
        public Builder() {
        }

        /** @param poolingType the pooling type */
        public Builder(PoolingType poolingType) {
            poolingType(poolingType);
        }

        /** @param poolingType the pooling type */
        public Builder(org.ferrodl.nn.conf.layers.PoolingType poolingType) {
            poolingType(poolingType);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window size
         */
        public Builder(PoolingType poolingType, int[] kernelSize) {
            this(poolingType);
            kernelSize(kernelSize);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window size
         * @param stride stride
         */
        public Builder(PoolingType poolingType, int[] kernelSize, int[] stride) {
            this(poolingType, kernelSize);
            stride(stride);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window size
         * @param stride stride
         * @param padding padding
         */
        public Builder(PoolingType poolingType, int[] kernelSize, int[] stride, int[] padding) {
            this(poolingType, kernelSize, stride);
            padding(padding);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window size
         */
        public Builder(org.ferrodl.nn.conf.layers.PoolingType poolingType, int[] kernelSize) {
            this(poolingType);
            kernelSize(kernelSize);
        }

        /**
         * @param poolingType the pooling type
         * @param kernelSize window size
         * @param stride stride
         * @param padding padding
         */
        public Builder(org.ferrodl.nn.conf.layers.PoolingType poolingType, int[] kernelSize, int[] stride,
                int[] padding) {
            this(poolingType, kernelSize);
            stride(stride);
            padding(padding);
        }

        /** @param kernelSize window size {@code kH, kW} (MAX pooling) */
        public Builder(int... kernelSize) {
            kernelSize(kernelSize);
        }

        /**
         * @param kernelSize window size (MAX pooling)
         * @param stride stride
         */
        public Builder(int[] kernelSize, int[] stride) {
            kernelSize(kernelSize);
            stride(stride);
        }

        /**
         * @param kernelSize window size (MAX pooling)
         * @param stride stride
         * @param padding padding
         */
        public Builder(int[] kernelSize, int[] stride, int[] padding) {
            this(kernelSize, stride);
            padding(padding);
        }

        /**
         * @param poolingType the pooling type
         * @return this builder
         */
        public Builder poolingType(PoolingType poolingType) {
            this.poolingType = poolingType == null ? null : poolingType.toPoolingType();
            return this;
        }

        /**
         * @param poolingType the pooling type
         * @return this builder
         */
        public Builder poolingType(org.ferrodl.nn.conf.layers.PoolingType poolingType) {
            this.poolingType = poolingType;
            return this;
        }

        /**
         * @param kernelSize window size {@code kH, kW} (one value: square; default 1×1)
         * @return this builder
         */
        public Builder kernelSize(int... kernelSize) {
            this.kernelSize = pair("SubsamplingLayer", "kernelSize", kernelSize);
            return this;
        }

        /**
         * @param stride stride {@code sH, sW} (default 2×2)
         * @return this builder
         */
        public Builder stride(int... stride) {
            this.stride = pair("SubsamplingLayer", "stride", stride);
            return this;
        }

        /**
         * @param padding padding {@code pH, pW} (default 0×0; ignored in Same mode)
         * @return this builder
         */
        public Builder padding(int... padding) {
            this.padding = pair("SubsamplingLayer", "padding", padding);
            return this;
        }

        /**
         * @param dilation dilation {@code dH, dW} (default 1×1)
         * @return this builder
         */
        public Builder dilation(int... dilation) {
            this.dilation = pair("SubsamplingLayer", "dilation", dilation);
            return this;
        }

        /**
         * @param convolutionMode the convolution mode (default: the network's, Truncate)
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
        public SubsamplingLayer build() {
            return new SubsamplingLayer(this);
        }
    }
}
