package org.ferrodl.nn.conf;

/**
 * Layout of recurrent activations, as the reference names it: {@link #NCW} {@code [minibatch, size,
 * timeSteps]} (the default) or {@link #NWC} {@code [minibatch, timeSteps, size]}. In JSON it is the
 * string {@code "NCW"} or {@code "NWC"} (fields {@code rnnDataFormat}, {@code outputFormat} and the
 * recurrent input type's {@code format}); any other string is refused when the configuration is read.
 */
public enum RNNFormat {
    /** {@code [minibatch, size, timeSteps]}: channels first (the reference's default). */
    NCW,
    /** {@code [minibatch, timeSteps, size]}: channels last. */
    NWC
}
