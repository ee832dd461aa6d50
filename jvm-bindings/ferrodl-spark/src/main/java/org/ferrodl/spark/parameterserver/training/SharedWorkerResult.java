package org.ferrodl.spark.parameterserver.training;

import java.util.List;
import org.ferrodl.spark.api.TrainingResult;

/**
 * What one worker task returns to the driver: its executor, the node report and one report per
 * replica (JSON written natively), and the replicas' updater states (averaged on the driver into
 * the state the next fit starts from). Parameters are not returned: the driver's relay already
 * holds them.
 */
public final class SharedWorkerResult implements TrainingResult {
    private static final long serialVersionUID = 2L;

    final int partition;
    final int attempt;
    final String executorId;
    final long fitMillis;
    final String nodeReportJson;
    final List<String> replicaReportsJson;
    final long minibatches;
    final long examples;
    /** Wall clock (ms since the epoch, executor host) when the task started. */
    final long startWallMillis;
    /**
     * Java-side phase times of the task (ns): connecting (network replicas built, relay
     * handshake, parameters downloaded), waiting for minibatches from the data source, the
     * native training calls (the native phases plus JNI and the batch copies), waiting for the
     * driver to apply the last updates (handing it the replicas' updater states), and reading the
     * reports.
     */
    final long connectNanos;
    /** From the task's start to the first object of the data source. */
    final long firstDataNanos;
    final long dataNanos;
    final long fitCallNanos;
    final long finishNanos;
    final long resultNanos;

    SharedWorkerResult(int partition, int attempt, String executorId, long fitMillis, String nodeReportJson,
                       List<String> replicaReportsJson, long minibatches,
                       long examples, long startWallMillis, long firstDataNanos,
                       long connectNanos, long dataNanos, long fitCallNanos, long finishNanos, long resultNanos) {
        this.partition = partition;
        this.attempt = attempt;
        this.executorId = executorId;
        this.fitMillis = fitMillis;
        this.nodeReportJson = nodeReportJson;
        this.replicaReportsJson = replicaReportsJson;
        this.minibatches = minibatches;
        this.examples = examples;
        this.startWallMillis = startWallMillis;
        this.connectNanos = connectNanos;
        this.firstDataNanos = firstDataNanos;
        this.dataNanos = dataNanos;
        this.fitCallNanos = fitCallNanos;
        this.finishNanos = finishNanos;
        this.resultNanos = resultNanos;
    }

    @Override
    public long getMinibatches() {
        return minibatches;
    }

    @Override
    public long getExamples() {
        return examples;
    }
}
