package org.ferrodl.spark.impl.repartitioner;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.spark.api.Repartitioner;

/**
 * The default repartitioner: balanced partitions (sizes differ by at most one object, order kept
 * within a partition), one per worker ({@code numExecutors}), but never so many that a partition
 * holds fewer than {@code minObjectsPerPartition} objects, and never more than
 * {@code maxPartitions} (5000 by default, as in the reference). Data that is already partitioned
 * that way is returned as is, without a shuffle.
 *
 * <p><b>Difference from the reference:</b> the reference's DefaultRepartitioner ignores
 * {@code numExecutors} and makes {@code ceil(count / minObjectsPerPartition)} partitions (up to
 * {@code maxPartitions}), i.e. many partitions of about one minibatch, because its workers are
 * long-lived per JVM and keep their model, updater and residual between partitions. A ferrodl
 * gradient-sharing worker lives for one task (one partition): its optimizer state and residual
 * start fresh with each partition, so ferrodl makes one partition per worker instead.
 */
public final class DefaultRepartitioner implements Repartitioner {
    private static final long serialVersionUID = 1L;
    public static final int DEFAULT_MAX_PARTITIONS = 5000;

    private final int maxPartitions;

    /** Up to {@link #DEFAULT_MAX_PARTITIONS} partitions. */
    public DefaultRepartitioner() {
        this(DEFAULT_MAX_PARTITIONS);
    }

    /** @param maxPartitions the most partitions to make; at least 1 */
    @JsonCreator
    public DefaultRepartitioner(@JsonProperty("maxPartitions") int maxPartitions) {
        if (maxPartitions < 1) {
            throw new IllegalArgumentException("maxPartitions must be >= 1, got " + maxPartitions);
        }
        this.maxPartitions = maxPartitions;
    }

    public int getMaxPartitions() {
        return maxPartitions;
    }

    /**
     * The number of partitions used for {@code count} objects:
     * {@code min(maxPartitions, numExecutors, floor(count / minObjectsPerPartition))}, at least 1
     * (non-positive arguments count as 1).
     */
    public int numPartitions(long count, int minObjectsPerPartition, int numExecutors) {
        long byMinimum = count / Math.max(1, minObjectsPerPartition);
        long n = Math.min(Math.min(maxPartitions, Math.max(1, numExecutors)), byMinimum);
        return (int) Math.max(1, n);
    }

    @Override
    public <T> JavaRDD<T> repartition(JavaRDD<T> input, int minObjectsPerPartition, int numExecutors) {
        return repartition(input, minObjectsPerPartition, numExecutors, partitionSizes(input));
    }

    /**
     * {@link #repartition(JavaRDD, int, int)} with the partition sizes of {@code input} already
     * known (from {@link #partitionSizes}; a master that fits the same persisted RDD every epoch
     * counts it once).
     */
    public <T> JavaRDD<T> repartition(JavaRDD<T> input, int minObjectsPerPartition, int numExecutors, long[] sizes) {
        int partitions = numPartitions(Balanced.total(sizes), minObjectsPerPartition, numExecutors);
        return Balanced.into(input, partitions, sizes);
    }

    /** The number of objects in each partition of {@code input} (one Spark job). */
    public static long[] partitionSizes(JavaRDD<?> input) {
        return Balanced.partitionSizes(input);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DefaultRepartitioner d && d.maxPartitions == maxPartitions;
    }

    @Override
    public int hashCode() {
        return Integer.hashCode(maxPartitions);
    }

    @Override
    public String toString() {
        return "DefaultRepartitioner(maxPartitions=" + maxPartitions + ")";
    }
}
