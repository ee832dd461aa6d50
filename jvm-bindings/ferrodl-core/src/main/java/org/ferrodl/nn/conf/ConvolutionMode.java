package org.ferrodl.nn.conf;

/**
 * How convolution and subsampling layers size their output and pad their input (the reference's
 * names; the default is {@link #Truncate}).
 */
public enum ConvolutionMode {
    /**
     * Output size {@code (in + 2p - d·(k-1) - 1) / s + 1}, which must divide exactly: a
     * configuration that does not is rejected at {@code build()}.
     */
    Strict,
    /**
     * Output size {@code floor((in + 2p - d·(k-1) - 1) / s) + 1}: border rows/columns that do not
     * fit the last window are dropped (default).
     */
    Truncate,
    /** Output size {@code ceil(in / s)}; padding is chosen automatically (explicit padding is ignored). */
    Same,
    /**
     * Causal padding of 1D layers ({@code Convolution1DLayer}, {@code Subsampling1DLayer}) only:
     * {@code d·(k-1)} zeros before the sequence, output length {@code ceil(in / s)}.
     */
    Causal
}
