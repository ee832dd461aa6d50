package org.ferrodl.spark.impl.paramavg;

import java.io.Serializable;

/**
 * Where an object of the training RDD goes: its position in the fit's order (RDD order, or the
 * seeded shuffle) and the RDD partition it came from (the worker when partitions are kept).
 */
record Placed(long position, int partition) implements Serializable {
}
