package org.ferrodl.exception;

/**
 * Bytes that are not a valid serialized DataSet: a truncated file, a file of another kind or an
 * unsupported format version (Rust {@code DataError::Format}).
 */
public class DataSetFormatException extends FerroIllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public DataSetFormatException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public DataSetFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
