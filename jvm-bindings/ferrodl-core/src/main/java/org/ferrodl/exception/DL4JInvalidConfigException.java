package org.ferrodl.exception;

/**
 * An invalid network configuration: thrown by {@code ListBuilder.build()}, by
 * {@code MultiLayerConfiguration.fromJson/fromYaml} and by the native engine (Rust {@code NnError::InvalidConfig}).
 * The message names the layer index and the problem.
 */
public class DL4JInvalidConfigException extends FerroIllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public DL4JInvalidConfigException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public DL4JInvalidConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
