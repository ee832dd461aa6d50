package org.ferrodl.spark.parameterserver.training;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.api.java.JavaFutureAction;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.jni.NativeRelay;

/**
 * Runs the workers' job while watching the relay for stall reports: a worker task whose watchdog
 * saw no progress for {@code workerStallTimeoutMs} sends one (see {@link SharedTrainingWorker}),
 * and the driver then cancels the job (interrupting its tasks) and fails the fit with the
 * worker's own description of where it stopped. Without a report this is a plain
 * {@code collect()}, with the same exceptions.
 */
final class StallWatch {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How often the driver looks at the relay's stall reports. */
    private static final long POLL_MS = 250;
    private static final String INTERRUPT_ON_CANCEL = "spark.job.interruptOnCancel";

    private StallWatch() {}

    static <T> List<T> collect(JavaSparkContext sc, JavaRDD<T> rdd, long relay) {
        String previous = sc.getLocalProperty(INTERRUPT_ON_CANCEL);
        JavaFutureAction<List<T>> job;
        sc.setLocalProperty(INTERRUPT_ON_CANCEL, "true");
        try {
            job = rdd.collectAsync();
        } finally {
            sc.setLocalProperty(INTERRUPT_ON_CANCEL, previous);
        }
        try {
            while (true) {
                try {
                    return job.get(POLL_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    String stall = firstStall(NativeRelay.statsJson(relay));
                    if (stall != null) {
                        job.cancel(true);
                        throw new WorkerStalledException(stall);
                    }
                }
            }
        } catch (ExecutionException e) {
            throw StallWatch.<RuntimeException>sneaky(e.getCause() != null ? e.getCause() : e);
        } catch (InterruptedException e) {
            job.cancel(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the gradient-sharing workers", e);
        }
    }

    /** The first stall report of the relay's statistics as an error message, or null. */
    static String firstStall(String relayStatsJson) {
        JsonNode stalls;
        try {
            stalls = JSON.readTree(relayStatsJson).path("stalls");
        } catch (IOException e) {
            throw new UncheckedIOException("malformed relay statistics: " + relayStatsJson, e);
        }
        if (!stalls.isArray() || stalls.isEmpty()) {
            return null;
        }
        JsonNode s = stalls.get(0);
        return "ferrodl gradient sharing: the fit was cancelled because the worker task of partition "
                + s.path("partition").asInt() + " (attempt " + s.path("attempt").asInt() + ", relay connection from "
                + s.path("peer").asText() + ") stalled: " + s.path("report").asText()
                + ". Raise SharedTrainingMaster.Builder.workerStallTimeoutMs if a minibatch legitimately takes longer.";
    }

    /** Rethrows the job's own failure (a SparkException, checked in Java's eyes) unchanged. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
