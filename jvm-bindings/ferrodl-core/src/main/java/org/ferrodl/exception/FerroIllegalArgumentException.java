package org.ferrodl.exception;

/**
 * Base class of the ferrodl exceptions that report a bad argument: an invalid configuration, invalid
 * input data or a malformed serialized DataSet. Catch this to handle all of them at once.
 */
public class FerroIllegalArgumentException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public FerroIllegalArgumentException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public FerroIllegalArgumentException(String message, Throwable cause) {
        super(message, cause);
    }
}
