package org.ferrodl.spark.impl.repartitioner;

import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.spark.api.Repartitioner;

/** Keeps the data's partitioning as it is. */
public final class NoOpRepartitioner implements Repartitioner {
    private static final long serialVersionUID = 1L;

    @Override
    public <T> JavaRDD<T> repartition(JavaRDD<T> input, int minObjectsPerPartition, int numExecutors) {
        return input;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NoOpRepartitioner;
    }

    @Override
    public int hashCode() {
        return NoOpRepartitioner.class.hashCode();
    }

    @Override
    public String toString() {
        return "NoOpRepartitioner";
    }
}
