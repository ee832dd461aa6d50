package org.ferrodl.spark.api;

import java.io.Serializable;

/**
 * What a training worker knows about the data it is given, as the reference's
 * {@code WorkerConfiguration}: whether it trains a graph, the examples in each RDD object, the
 * minibatch size per worker, the most minibatches one task fits (0: no limit), the minibatches
 * prepared ahead on a background thread, and whether statistics are collected. Immutable.
 */
public final class WorkerConfiguration implements Serializable {
    private static final long serialVersionUID = 1L;

    private final boolean graphNetwork;
    private final int dataSetObjectSizeExamples;
    private final int batchSizePerWorker;
    private final int maxBatchesPerWorker;
    private final int prefetchNumBatches;
    private final boolean collectTrainingStats;

    public WorkerConfiguration(boolean graphNetwork, int dataSetObjectSizeExamples, int batchSizePerWorker,
                               int maxBatchesPerWorker, int prefetchNumBatches, boolean collectTrainingStats) {
        this.graphNetwork = graphNetwork;
        this.dataSetObjectSizeExamples = dataSetObjectSizeExamples;
        this.batchSizePerWorker = batchSizePerWorker;
        this.maxBatchesPerWorker = maxBatchesPerWorker;
        this.prefetchNumBatches = prefetchNumBatches;
        this.collectTrainingStats = collectTrainingStats;
    }

    public boolean isGraphNetwork() {
        return graphNetwork;
    }

    public int getDataSetObjectSizeExamples() {
        return dataSetObjectSizeExamples;
    }

    public int getBatchSizePerWorker() {
        return batchSizePerWorker;
    }

    /** @return the most minibatches one worker task fits; 0: no limit */
    public int getMaxBatchesPerWorker() {
        return maxBatchesPerWorker;
    }

    public int getPrefetchNumBatches() {
        return prefetchNumBatches;
    }

    public boolean isCollectTrainingStats() {
        return collectTrainingStats;
    }

    @Override
    public String toString() {
        return "WorkerConfiguration(graphNetwork=" + graphNetwork + ", dataSetObjectSizeExamples="
                + dataSetObjectSizeExamples + ", batchSizePerWorker=" + batchSizePerWorker + ", maxBatchesPerWorker="
                + maxBatchesPerWorker + ", prefetchNumBatches=" + prefetchNumBatches + ", collectTrainingStats="
                + collectTrainingStats + ")";
    }
}
