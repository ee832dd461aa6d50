package org.ferrodl.spark.api;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.spark.impl.repartitioner.DefaultRepartitioner;
import org.ferrodl.spark.impl.repartitioner.EqualRepartitioner;
import org.ferrodl.spark.impl.repartitioner.NoOpRepartitioner;

/**
 * Decides how training data is partitioned before a fit: every partition becomes one worker task,
 * so balanced partitions keep every worker busy until the end of the epoch.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = DefaultRepartitioner.class, name = "default"),
    @JsonSubTypes.Type(value = EqualRepartitioner.class, name = "equal"),
    @JsonSubTypes.Type(value = NoOpRepartitioner.class, name = "noop"),
})
public interface Repartitioner extends Serializable {

    /**
     * @param input the data
     * @param minObjectsPerPartition the fewest objects a partition should hold (one minibatch)
     * @param numExecutors the number of parallel workers
     * @return the repartitioned data
     */
    <T> JavaRDD<T> repartition(JavaRDD<T> input, int minObjectsPerPartition, int numExecutors);
}
