package org.ferrodl.spark.api;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Timing and size statistics of one distributed fit: one entry per worker result, in the order
 * the splits were processed.
 */
public final class SparkTrainingStats implements Serializable {
    private static final long serialVersionUID = 1L;

    /** What one worker did in one split. */
    public record WorkerStats(int split, int partition, String executorId, int minibatches, int examples,
                              long fitMillis, double lastScore) implements Serializable {
    }

    private final List<WorkerStats> workers = new ArrayList<>();
    private final List<Long> splitMillis = new ArrayList<>();

    public void addWorker(WorkerStats stats) {
        workers.add(stats);
    }

    public void addSplitMillis(long millis) {
        splitMillis.add(millis);
    }

    /** Per-worker statistics, one entry per worker and split. */
    public List<WorkerStats> getWorkerStats() {
        return Collections.unmodifiableList(workers);
    }

    /** Wall-clock time of each split, as seen by the driver (ms). */
    public List<Long> getSplitMillis() {
        return Collections.unmodifiableList(splitMillis);
    }

    /** Distinct executor ids that ran training work. */
    public List<String> getExecutorIds() {
        return workers.stream().map(WorkerStats::executorId).distinct().sorted().toList();
    }

    @Override
    public String toString() {
        long total = splitMillis.stream().mapToLong(Long::longValue).sum();
        return "SparkTrainingStats{splits=" + splitMillis.size() + ", workerResults=" + workers.size()
                + ", executors=" + getExecutorIds() + ", totalSplitMillis=" + total + "}";
    }
}
