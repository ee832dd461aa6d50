package org.ferrodl.spark.impl.repartitioner;

import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.spark.api.Repartitioner;

/**
 * Exactly {@code numExecutors} partitions whose sizes differ by at most one object (order kept
 * within a partition), whatever {@code minObjectsPerPartition}; with fewer objects than
 * partitions, some partitions are empty. Data that is already partitioned that way is returned as
 * is, without a shuffle.
 */
public final class EqualRepartitioner implements Repartitioner {
    private static final long serialVersionUID = 1L;

    @Override
    public <T> JavaRDD<T> repartition(JavaRDD<T> input, int minObjectsPerPartition, int numExecutors) {
        if (numExecutors < 1) {
            throw new IllegalArgumentException("numExecutors must be >= 1, got " + numExecutors);
        }
        return Balanced.into(input, numExecutors, Balanced.partitionSizes(input));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EqualRepartitioner;
    }

    @Override
    public int hashCode() {
        return EqualRepartitioner.class.hashCode();
    }

    @Override
    public String toString() {
        return "EqualRepartitioner";
    }
}
