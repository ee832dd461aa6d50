package org.ferrodl.nn.conf.layers;

import java.util.Objects;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.inputs.InputType;

/**
 * 1D convolution over recurrent activations {@code [C, L]}: {@code nIn} input channels (inferred from
 * {@code setInputType(InputType.recurrent(..))}), {@code nOut} filters of length {@code kernelSize}
 * (required, as in the reference), stride (1), padding (0) and dilation (1). Weights
 * {@code [nOut, nIn, k]}, biases {@code [nOut]}.
 *
 * <pre>{@code new Convolution1DLayer.Builder(3).nOut(16).activation(Activation.RELU).build()}</pre>
 */
public class Convolution1DLayer extends FeedForwardLayer {
    private static final long serialVersionUID = 1L;

    /** Kernel length (0: not set). */
    protected int kernelSize;
    /** Stride. */
    protected int stride = 1;
    /** Zero padding on both ends. */
    protected int padding;
    /** Dilation. */
    protected int dilation = 1;
    /** Convolution mode, or null for the global one. */
    protected ConvolutionMode convolutionMode;
    /** Whether the layer has a bias per filter. */
    protected boolean hasBias = true;

    /** For deserialization. */
    protected Convolution1DLayer() {
    }

    /** @param b the builder */
    protected Convolution1DLayer(Builder b) {
        super(b);
        this.kernelSize = b.kernelSize;
        this.stride = b.stride;
        this.padding = b.padding;
        this.dilation = b.dilation;
        this.convolutionMode = b.convolutionMode;
        this.hasBias = b.hasBias;
    }

    /** @return the kernel length (0 when not set) */
    public int getKernelSize() {
        return kernelSize;
    }

    /** @param kernelSize the kernel length */
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
        if (kernelSize == 0) {
            throw invalid(who, "kernelSize is not set; use new Convolution1DLayer.Builder(kernelSize) or "
                    + ".kernelSize(..)");
        }
        WindowSettings.atLeast(who, "kernelSize", new int[] {kernelSize}, 1, 1);
        WindowSettings.atLeast(who, "stride", new int[] {stride}, 1, 1);
        WindowSettings.atLeast(who, "padding", new int[] {padding}, 0, 1);
        WindowSettings.atLeast(who, "dilation", new int[] {dilation}, 1, 1);
        WindowSettings.checkMode(who, convolutionMode, true);
    }

    @Override
    public Convolution1DLayer clone() {
        return (Convolution1DLayer) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        Convolution1DLayer c = (Convolution1DLayer) o;
        return kernelSize == c.kernelSize && stride == c.stride && padding == c.padding && dilation == c.dilation
                && convolutionMode == c.convolutionMode && hasBias == c.hasBias;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), kernelSize, stride, padding, dilation, convolutionMode, hasBias);
    }

    /** Builder of {@link Convolution1DLayer}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        /** Kernel length. */
        protected int kernelSize;
        /** Stride. */
        protected int stride = 1;
        /** Padding. */
        protected int padding;
        /** Dilation. */
        protected int dilation = 1;
        /** Convolution mode (null: the global one). */
        protected ConvolutionMode convolutionMode;
        /** Bias on/off. */
        protected boolean hasBias = true;

        /** A builder without kernel size (set it with {@link #kernelSize(int)}), stride 1, padding 0. */
        public Builder() {
        }

        /** @param kernelSize kernel length */
        public Builder(int kernelSize) {
            this.kernelSize = kernelSize;
        }

        /**
         * @param kernelSize kernel length
         * @param stride stride
         */
        public Builder(int kernelSize, int stride) {
            this(kernelSize);
            this.stride = stride;
        }

        /**
         * @param kernelSize kernel length
         * @param stride stride
         * @param padding padding
         */
        public Builder(int kernelSize, int stride, int padding) {
            this(kernelSize, stride);
            this.padding = padding;
        }

        /**
         * @param kernelSize kernel length
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
         * @param padding zero padding on both ends (default 0; ignored in Same and Causal modes)
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
         * @param hasBias whether the layer has biases (default true)
         * @return this builder
         */
        public Builder hasBias(boolean hasBias) {
            this.hasBias = hasBias;
            return this;
        }

        @Override
        public Convolution1DLayer build() {
            return new Convolution1DLayer(this);
        }
    }
}
