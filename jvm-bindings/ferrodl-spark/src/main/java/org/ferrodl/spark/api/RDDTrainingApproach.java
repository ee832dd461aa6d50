package org.ferrodl.spark.api;

/**
 * How a training master consumes an {@code RDD<DataSet>}: {@link #Export} writes the DataSets to a
 * (shared) directory first and trains from the files, {@link #Direct} trains from the RDD itself
 * (persisted with the master's storage level).
 */
public enum RDDTrainingApproach {
    Export,
    Direct
}
