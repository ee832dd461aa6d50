package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import org.ferrodl.nn.conf.ConvolutionMode;

/**
 * Setting checks shared by the convolution, subsampling, padding and upsampling layers (value
 * ranges only: output sizes are the engine's).
 */
final class WindowSettings {
    private WindowSettings() {
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
