package org.ferrodl.spark.api;

/**
 * How the objects of a split are redistributed among workers when {@link Repartition} says so.
 * <ul>
 *   <li>{@link #Balanced} (default): contiguous runs of the split, in order, one per worker, whose
 *       sizes differ by at most one object; with {@code batchSizePerWorker × averagingFrequency}
 *       examples per worker, every worker fits full minibatches.</li>
 *   <li>{@link #SparkDefault}: Spark's own {@code repartition(numWorkers)} (each input partition deals
 *       its objects round-robin from a start that depends on the partition index), which can leave
 *       workers with unequal shares. Deterministic for a given partitioning.</li>
 * </ul>
 */
public enum RepartitionStrategy {
    Balanced,
    SparkDefault
}
