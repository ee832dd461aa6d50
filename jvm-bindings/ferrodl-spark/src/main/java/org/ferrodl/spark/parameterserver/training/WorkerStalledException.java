package org.ferrodl.spark.parameterserver.training;

/**
 * A gradient-sharing fit was cancelled because one of its worker tasks made no progress for
 * {@code workerStallTimeoutMs} while connected to the relay. The message names the task's
 * executor, host, partition and attempt, and the last thing it did (for example "waiting for
 * minibatch 4 from the data source").
 */
public class WorkerStalledException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public WorkerStalledException(String message) {
        super(message);
    }
}
