package org.ferrodl.nn.conf;

/**
 * How a network with recurrent layers is trained on a minibatch of sequences (the reference's names):
 * {@link #Standard} backpropagation through the whole sequence (one update per minibatch), or
 * {@link #TruncatedBPTT}: the time axis is cut into segments of {@code tBPTTForwardLength} steps,
 * each one iteration (forward from the state the previous segment left, backward over at most
 * {@code tBPTTBackwardLength} steps, one update). JSON top-level field {@code backpropType}.
 */
public enum BackpropType {
    /** Backpropagation through the whole sequence (default). */
    Standard,
    /** Truncated backpropagation through time. */
    TruncatedBPTT
}
