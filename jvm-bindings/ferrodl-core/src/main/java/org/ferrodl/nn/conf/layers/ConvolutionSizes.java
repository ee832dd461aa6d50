package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import org.ferrodl.nn.conf.ConvolutionMode;

/** Output sizes and setting checks shared by the convolution and subsampling layers. */
final class ConvolutionSizes {
    private ConvolutionSizes() {
    }

    /**
     * The output length of one dimension.
     *
     * @param dim "height", "width" or "length" (for messages)
     */
    static long outputSize(String who, String dim, long in, int k, int s, int p, int d, ConvolutionMode mode) {
        if (mode == ConvolutionMode.Same || mode == ConvolutionMode.Causal) {
            return (in + s - 1) / s;
        }
        long kEff = (long) d * (k - 1) + 1;
        long padded = in + 2L * p;
        if (kEff > padded) {
            throw Layer.invalid(who, "kernel " + k + " (dilation " + d + ", effective " + kEff + ") is larger than the "
                    + dim + " of the input (" + in + ") plus padding 2×" + p);
        }
        long span = padded - kEff;
        if (mode == ConvolutionMode.Strict && span % s != 0) {
            throw Layer.invalid(who, "ConvolutionMode.Strict: (input " + dim + " " + in + " + 2×padding " + p
                    + " − effective kernel " + kEff + ") = " + span + " is not divisible by stride " + s
                    + "; use Truncate or Same, or change kernel/stride/padding");
        }
        return span / s + 1;
    }

    /** Checks every value is at least {@code min}. */
    static void atLeast(String who, String field, int[] v, int min, int length) {
        if (v == null) {
            throw Layer.invalid(who, field + " is not set");
        }
        if (v.length != length) {
            throw Layer.invalid(who, field + "=" + Arrays.toString(v) + " is invalid (needs " + length + " values)");
        }
        for (int x : v) {
            if (x < min) {
                throw Layer.invalid(who, field + "=" + (length == 1 ? String.valueOf(v[0]) : Arrays.toString(v))
                        + " is invalid (every value must be at least " + min + ")");
            }
        }
    }

    /** Checks the convolution mode is set and, for 2D layers, not Causal. */
    static void checkMode(String who, ConvolutionMode mode, boolean oneDimensional) {
        if (mode == null) {
            throw Layer.missing(who, "convolutionMode");
        }
        if (mode == ConvolutionMode.Causal && !oneDimensional) {
            throw Layer.invalid(who, "ConvolutionMode.Causal is only for 1D layers (Convolution1DLayer, "
                    + "Subsampling1DLayer)");
        }
    }
}
