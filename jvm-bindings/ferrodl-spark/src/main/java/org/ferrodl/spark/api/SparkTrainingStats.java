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

    /**
     * What one parameter-averaging worker did in one split: when it started (executor clock, ms
     * since the epoch), and how long its phases took — rebuilding the network from the broadcast
     * ({@code restoreMillis}), reading and assembling minibatches ({@code dataMillis}), fitting
     * ({@code fitMillis}, the engine's training steps) and extracting its parameters
     * ({@code resultMillis}); the executor JVM's native memory (bytes in use at the end of the
     * task, its network still open, and the most held at once since the JVM started:
     * {@code NativeInfo.nativeMemoryBytes()}).
     */
    public record WorkerStats(int split, int partition, String executorId, int minibatches, int examples,
                              long startTimeMillis, long restoreMillis, long dataMillis, long fitMillis,
                              long resultMillis, double lastScore, long nativeBytesInUse, long nativeBytesPeak)
            implements Serializable {
        /** @return the worker's whole time in this split (ms) */
        public long totalMillis() {
            return restoreMillis + dataMillis + fitMillis + resultMillis;
        }
    }

    /** One step of a gradient-sharing replica: the threshold used, the fraction sent, the message size. */
    public record EncodingStep(long iteration, float threshold, double sparsity, int bytes) implements Serializable {
    }

    /**
     * One gradient-sharing worker task (SharedTrainingMaster): where it ran, how long, how much it
     * trained and exchanged, (per replica, in step order) the threshold and sparsity over time, and
     * the executor JVM's native memory when the task finished (bytes in use, and the most held at
     * once since the JVM started).
     */
    public record SharingWorkerStats(int partition, int attempt, String executorId, long fitMillis,
                                     long minibatches, long examples, double lastScore, long messagesSent,
                                     long bytesSent, long messagesReceived, long bytesReceived,
                                     long startIteration, List<List<EncodingStep>> replicaSteps,
                                     long nativeBytesInUse, long nativeBytesPeak)
            implements Serializable {
    }

    private final List<WorkerStats> workers = new ArrayList<>();
    private final List<SharingWorkerStats> sharingWorkers = new ArrayList<>();
    private String relayStatsJson;
    private long parameterCount;
    private final List<Long> splitMillis = new ArrayList<>();
    private TimeBreakdown timeBreakdown;

    public void addWorker(WorkerStats stats) {
        workers.add(stats);
    }

    public void addSplitMillis(long millis) {
        splitMillis.add(millis);
    }

    /** Per-worker statistics, one entry per worker and split. */
    public void addSharingWorker(SharingWorkerStats stats) {
        sharingWorkers.add(stats);
    }

    /** Gradient sharing: one entry per worker task that ran (re-run attempts included). */
    public List<SharingWorkerStats> getSharingWorkerStats() {
        return Collections.unmodifiableList(sharingWorkers);
    }

    /**
     * Gradient sharing: the driver relay's counters as JSON — per partition messages and bytes
     * received, applied, relayed and dropped, and connections accepted, rejected, aborted and
     * re-established.
     */
    public String getRelayStatsJson() {
        return relayStatsJson;
    }

    public void setRelayStatsJson(String relayStatsJson) {
        this.relayStatsJson = relayStatsJson;
    }

    /** Number of network parameters (for comparing wire bytes with dense fp32 updates). */
    public long getParameterCount() {
        return parameterCount;
    }

    public void setParameterCount(long parameterCount) {
        this.parameterCount = parameterCount;
    }

    /**
     * Gradient sharing: mean bytes a worker sent per iteration (all attempts), or NaN without
     * sharing statistics. Compare with {@code 4 * getParameterCount()}, the dense fp32 update.
     */
    public double getMeanBytesPerWorkerIteration() {
        long bytes = 0;
        long steps = 0;
        for (SharingWorkerStats w : sharingWorkers) {
            bytes += w.bytesSent();
            steps += w.minibatches();
        }
        return steps == 0 ? Double.NaN : (double) bytes / steps;
    }

    /** Where the fit's time went per worker iteration (compute, encoding, Spark, data, ...). */
    public TimeBreakdown getTimeBreakdown() {
        return timeBreakdown;
    }

    public void setTimeBreakdown(TimeBreakdown timeBreakdown) {
        this.timeBreakdown = timeBreakdown;
    }

    public List<WorkerStats> getWorkerStats() {
        return Collections.unmodifiableList(workers);
    }

    /** Wall-clock time of each split, as seen by the driver (ms). */
    public List<Long> getSplitMillis() {
        return Collections.unmodifiableList(splitMillis);
    }

    /**
     * Native memory per executor: the most native bytes its JVM held at once, as reported by its
     * last worker task of either master (0 for an executor whose library does not count).
     *
     * @return executor id to peak native bytes, sorted by id
     */
    public java.util.SortedMap<String, Long> getNativeBytesPeakByExecutor() {
        java.util.SortedMap<String, Long> peak = new java.util.TreeMap<>();
        workers.forEach(w -> peak.merge(w.executorId(), w.nativeBytesPeak(), Math::max));
        sharingWorkers.forEach(w -> peak.merge(w.executorId(), w.nativeBytesPeak(), Math::max));
        return peak;
    }

    /** Distinct executor ids that ran training work. */
    public List<String> getExecutorIds() {
        return java.util.stream.Stream.concat(workers.stream().map(WorkerStats::executorId),
                sharingWorkers.stream().map(SharingWorkerStats::executorId)).distinct().sorted().toList();
    }

    @Override
    public String toString() {
        long total = splitMillis.stream().mapToLong(Long::longValue).sum();
        return "SparkTrainingStats{splits=" + splitMillis.size() + ", workerResults=" + workers.size()
                + ", sharingWorkers=" + sharingWorkers.size()
                + ", executors=" + getExecutorIds() + ", totalSplitMillis=" + total + "}";
    }
}
