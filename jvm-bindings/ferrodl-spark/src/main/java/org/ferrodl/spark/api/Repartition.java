package org.ferrodl.spark.api;

/**
 * When the training master redistributes DataSet objects among workers before training.
 * <ul>
 *   <li>{@link #Always} (default): objects are shuffled with the master's seed and dealt into equal
 *       shares, so every worker gets exactly {@code batchSizePerWorker × averagingFrequency} examples
 *       per split whenever the counts divide.</li>
 *   <li>{@link #Never}: the RDD's order is kept (no shuffle); shares are contiguous runs of objects in
 *       that order, with the same exact sizes. One worker then sees the data exactly as local training
 *       would.</li>
 * </ul>
 */
public enum Repartition {
    Always,
    Never
}
