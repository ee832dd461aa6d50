package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.nn.conf.ConvolutionMode;

/**
 * 2D convolution over {@code [C, H, W]} activations (NCHW): {@code nIn} input channels (inferred
 * from {@code setInputType(..)}), {@code nOut} filters of {@code kernelSize} (default 5×5), stride
 * (1×1), padding (0×0) and dilation (1×1). The output size follows the {@link ConvolutionMode}
 * (default: the network's, Truncate). Weights {@code [nOut, nIn, kH, kW]}, biases {@code [nOut]}.
 *
 * <pre>{@code new ConvolutionLayer.Builder(5, 5).nIn(1).stride(1, 1).nOut(20).activation(Activation.IDENTITY).build()}</pre>
 */
public class ConvolutionLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Kernel size {@code [kH, kW]}. */
    protected int[] kernelSize;
    /** Stride {@code [sH, sW]}. */
    protected int[] stride;
    /** Padding {@code [pH, pW]} (zeros on both sides). */
    protected int[] padding;
    /** Dilation {@code [dH, dW]}. */
    protected int[] dilation;
    /** Convolution mode, or null for the global one. */
    protected ConvolutionMode convolutionMode;
    /** Whether the layer has a bias per filter. */
    protected boolean hasBias = true;

    /** For deserialization. */
    protected ConvolutionLayer() {
    }

    /** @param b the builder */
    protected ConvolutionLayer(Builder b) {
        super(b);
        this.kernelSize = b.kernelSize.clone();
        this.stride = b.stride.clone();
        this.padding = b.padding.clone();
        this.dilation = b.dilation.clone();
        this.convolutionMode = b.convolutionMode;
        this.hasBias = b.hasBias;
    }

    /** @return a copy of the kernel size {@code [kH, kW]} */
    public int[] getKernelSize() {
        return kernelSize == null ? null : kernelSize.clone();
    }

    /** @param kernelSize kernel size {@code [kH, kW]} */
    public void setKernelSize(int... kernelSize) {
        this.kernelSize = pair("ConvolutionLayer", "kernelSize", kernelSize);
    }

    /** @return a copy of the stride {@code [sH, sW]} */
    public int[] getStride() {
        return stride == null ? null : stride.clone();
    }

    /** @param stride stride {@code [sH, sW]} */
    public void setStride(int... stride) {
        this.stride = pair("ConvolutionLayer", "stride", stride);
    }

    /** @return a copy of the padding {@code [pH, pW]} */
    public int[] getPadding() {
        return padding == null ? null : padding.clone();
    }

    /** @param padding padding {@code [pH, pW]} */
    public void setPadding(int... padding) {
        this.padding = pair("ConvolutionLayer", "padding", padding);
    }

    /** @return a copy of the dilation {@code [dH, dW]} */
    public int[] getDilation() {
        return dilation == null ? null : dilation.clone();
    }

    /** @param dilation dilation {@code [dH, dW]} */
    public void setDilation(int... dilation) {
        this.dilation = pair("ConvolutionLayer", "dilation", dilation);
    }

    /** @return the convolution mode, or null when unset (the global one applies) */
    public ConvolutionMode getConvolutionMode() {
        return convolutionMode;
    }

    /** @param convolutionMode the convolution mode */
    public void setConvolutionMode(ConvolutionMode convolutionMode) {
        this.convolutionMode = convolutionMode;
    }

    /** @return whether the layer has biases (default true) */
    public boolean getHasBias() {
        return hasBias;
    }

    /** @return whether the layer has biases (default true) */
    public boolean hasBias() {
        return hasBias;
    }

    /** @param hasBias whether the layer has biases */
    public void setHasBias(boolean hasBias) {
        this.hasBias = hasBias;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        WindowSettings.atLeast(who, "kernelSize", kernelSize, 1, 2);
        WindowSettings.atLeast(who, "stride", stride, 1, 2);
        WindowSettings.atLeast(who, "padding", padding, 0, 2);
        WindowSettings.atLeast(who, "dilation", dilation, 1, 2);
        WindowSettings.checkMode(who, convolutionMode, false);
    }

    @Override
    public ConvolutionLayer clone() {
        ConvolutionLayer c = (ConvolutionLayer) super.clone();
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
        ConvolutionLayer c = (ConvolutionLayer) o;
        return Arrays.equals(kernelSize, c.kernelSize) && Arrays.equals(stride, c.stride)
                && Arrays.equals(padding, c.padding) && Arrays.equals(dilation, c.dilation)
                && convolutionMode == c.convolutionMode && hasBias == c.hasBias;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), Arrays.hashCode(kernelSize), Arrays.hashCode(stride),
                Arrays.hashCode(padding), Arrays.hashCode(dilation), convolutionMode, hasBias);
    }

    /** Builder of {@link ConvolutionLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Kernel size. */
        protected int[] kernelSize = {5, 5};
        /** Stride. */
        protected int[] stride = {1, 1};
        /** Padding. */
        protected int[] padding = {0, 0};
        /** Dilation. */
        protected int[] dilation = {1, 1};
        /** Convolution mode (null: the global one). */
        protected ConvolutionMode convolutionMode;
        /** Bias on/off. */
        protected boolean hasBias = true;

        /** A builder with kernel 5×5, stride 1×1, padding 0×0, dilation 1×1. */
        public Builder() {
        }

        /** @param kernelSize kernel size {@code kH, kW} (one value: square) */
        public Builder(int... kernelSize) {
            kernelSize(kernelSize);
        }

        /**
         * @param kernelSize kernel size {@code [kH, kW]}
         * @param stride stride {@code [sH, sW]}
         */
        public Builder(int[] kernelSize, int[] stride) {
            kernelSize(kernelSize);
            stride(stride);
        }

        /**
         * @param kernelSize kernel size {@code [kH, kW]}
         * @param stride stride {@code [sH, sW]}
         * @param padding padding {@code [pH, pW]}
         */
        public Builder(int[] kernelSize, int[] stride, int[] padding) {
            this(kernelSize, stride);
            padding(padding);
        }

        /**
         * @param kernelSize kernel size {@code kH, kW} (one value: square; default 5×5)
         * @return this builder
         */
        public Builder kernelSize(int... kernelSize) {
            this.kernelSize = pair("ConvolutionLayer", "kernelSize", kernelSize);
            return this;
        }

        /**
         * @param stride stride {@code sH, sW} (default 1×1)
         * @return this builder
         */
        public Builder stride(int... stride) {
            this.stride = pair("ConvolutionLayer", "stride", stride);
            return this;
        }

        /**
         * @param padding zero padding {@code pH, pW} on both sides (default 0×0; ignored in Same mode)
         * @return this builder
         */
        public Builder padding(int... padding) {
            this.padding = pair("ConvolutionLayer", "padding", padding);
            return this;
        }

        /**
         * @param dilation dilation {@code dH, dW} (default 1×1)
         * @return this builder
         */
        public Builder dilation(int... dilation) {
            this.dilation = pair("ConvolutionLayer", "dilation", dilation);
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
         * @param hasBias whether the layer has biases (default true)
         * @return this builder
         */
        public Builder hasBias(boolean hasBias) {
            this.hasBias = hasBias;
            return this;
        }

        @Override
        public ConvolutionLayer build() {
            return new ConvolutionLayer(this);
        }
    }
}
