package org.ferrodl.exception;

/**
 * The native engine panicked during a call. The panic was caught at the JNI boundary, so the JVM is
 * unharmed; the message is the panic message. This is always a bug in ferrodl: please report it.
 */
public class NativePanicException extends NativeStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public NativePanicException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public NativePanicException(String message, Throwable cause) {
        super(message, cause);
    }
}
