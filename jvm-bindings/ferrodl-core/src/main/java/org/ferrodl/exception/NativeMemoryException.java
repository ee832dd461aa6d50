package org.ferrodl.exception;

/**
 * The engine refused a request for native memory (outside the Java heap): the network's
 * parameters, gradients and updater state, the activations of a minibatch, or a buffer would take
 * the process past the native memory budget, or its size does not fit 64 bits. The message names
 * what the memory was for, the bytes needed, the budget and the bytes in use. Nothing was allocated;
 * the JVM and the engine are unharmed.
 *
 * <p>Raise the budget with {@code NativeInfo.setNativeMemoryBudget(bytes)} or the
 * {@code FERRODL_NATIVE_MEMORY} environment variable (the default is the machine's physical memory),
 * or make the network or minibatch smaller.
 */
public class NativeMemoryException extends NativeStateException {
    private static final long serialVersionUID = 1L;

    /** @param message what was refused, the bytes needed and the budget */
    public NativeMemoryException(String message) {
        super(message);
    }
}
