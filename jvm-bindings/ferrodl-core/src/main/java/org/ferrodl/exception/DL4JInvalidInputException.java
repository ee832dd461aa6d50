package org.ferrodl.exception;

/**
 * Invalid input data for a network or a DataSet: wrong width or rank, NaN or infinite values, mismatched
 * row counts (Rust {@code NnError::InvalidInput}, {@code NnError::Shape} and {@code DataError::Shape}).
 */
public class DL4JInvalidInputException extends FerroIllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public DL4JInvalidInputException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public DL4JInvalidInputException(String message, Throwable cause) {
        super(message, cause);
    }
}
