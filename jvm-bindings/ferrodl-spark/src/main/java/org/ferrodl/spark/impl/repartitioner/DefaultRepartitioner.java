package org.ferrodl.spark.impl.repartitioner;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.spark.api.Repartitioner;

/**
 * The default: balanced partitions, one per worker ({@code numExecutors}), but never so many that a
 * partition holds fewer than {@code minObjectsPerPartition} objects, and never more than
 * {@code maxPartitions} (5000 by default). One partition per worker suits ferrodl: a worker task
 * keeps its optimizer state and residual for its whole partition.
 */
public final class DefaultRepartitioner implements Repartitioner {
    private static final long serialVersionUID = 1L;
    public static final int DEFAULT_MAX_PARTITIONS = 5000;

    private final int maxPartitions;

    public DefaultRepartitioner() {
        this(DEFAULT_MAX_PARTITIONS);
    }

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

    /** The number of partitions used for {@code count} objects. */
    public int numPartitions(long count, int minObjectsPerPartition, int numExecutors) {
        long byMinimum = Math.max(1, count / Math.max(1, minObjectsPerPartition));
        return (int) Math.max(1, Math.min(Math.min(maxPartitions, Math.max(1, numExecutors)), byMinimum));
    }

    @Override
    public <T> JavaRDD<T> repartition(JavaRDD<T> input, int minObjectsPerPartition, int numExecutors) {
        long count = input.count();
        int partitions = numPartitions(count, minObjectsPerPartition, numExecutors);
        return Balanced.into(input, partitions);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DefaultRepartitioner d && d.maxPartitions == maxPartitions;
    }

    @Override
    public int hashCode() {
        return Integer.hashCode(maxPartitions);
    }
}
