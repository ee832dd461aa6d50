package org.ferrodl.exception;

/**
 * The native side is in a state that forbids the call: an unknown or closed handle (for example a
 * {@code MultiLayerNetwork} used after {@code close()}), or an internal error of the engine.
 */
public class NativeStateException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public NativeStateException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public NativeStateException(String message, Throwable cause) {
        super(message, cause);
    }
}
