package org.ferrodl.exception;

/**
 * Gradient sharing could not reach or talk to the driver's update relay: a refused or timed-out
 * connection, failed authentication, or a connection lost mid-fit. The message names the relay's
 * host and port; check that executors can reach the driver on that port (see
 * {@code SharedTrainingMaster.Builder#relayPortRange} to pin it to an open range).
 */
public class RelayException extends NativeStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong, naming host and port
     */
    public RelayException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong, naming host and port
     * @param cause the underlying failure
     */
    public RelayException(String message, Throwable cause) {
        super(message, cause);
    }
}
