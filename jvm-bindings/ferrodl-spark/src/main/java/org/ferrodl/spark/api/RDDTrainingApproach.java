package org.ferrodl.spark.api;

/**
 * How a training master consumes an {@code RDD<DataSet>}: {@link #Export} writes the DataSets to a
 * (shared) directory first and trains from the files, {@link #Direct} trains from the RDD itself
 * (persisted with the master's storage level).
 *
 * <p>An RDD the user has already persisted ({@code rdd.cache()}, {@code rdd.persist(level)}) is
 * trained from directly under either approach: it is materialised already, so writing it out again
 * every fit and reading it back per minibatch would only cost time (measured: exporting and loading
 * made gradient sharing 10× slower than training from the cached RDD; docs/BENCHMARKS.md, Spark
 * path). <b>Difference from the reference</b>, which exports a persisted RDD too.
 */
public enum RDDTrainingApproach {
    Export,
    Direct
}
