package org.ferrodl.spark.api;

/**
 * When a training master redistributes the objects of each split among its workers before
 * training (how: {@link RepartitionStrategy}).
 * <ul>
 *   <li>{@link #Always} (default): every split is redistributed over {@code numWorkers} workers.</li>
 *   <li>{@link #NumPartitionsWorkersDiffers}: only when the RDD's number of partitions differs from
 *       the number of workers; otherwise as {@link #Never}.</li>
 *   <li>{@link #Never}: objects stay in their partition: each partition of the RDD is one worker
 *       (so the number of workers is the number of partitions), and a split takes from every
 *       partition the objects whose positions fall into it.</li>
 * </ul>
 * In every case a worker trains on its objects in their RDD order (or in the order of the seeded
 * shuffle when the master has an {@code rngSeed}).
 */
public enum Repartition {
    Always,
    NumPartitionsWorkersDiffers,
    Never
}
