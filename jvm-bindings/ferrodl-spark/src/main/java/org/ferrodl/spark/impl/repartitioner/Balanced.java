package org.ferrodl.spark.impl.repartitioner;

import java.util.Iterator;
import java.util.List;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.spark.impl.common.CachedBlocksRDD;
import scala.Tuple2;

/**
 * Balanced repartitioning shared by the repartitioners: the object at global index {@code i}
 * (partition by partition, in order) goes to partition {@code i mod n}, so partition sizes differ
 * by at most one, and each partition keeps the objects in their original order. Deterministic: the
 * same input gives the same partitions.
 */
final class Balanced {
    private Balanced() {}

    /**
     * Number of objects in each partition of {@code input} (one Spark job). A persisted RDD is read by
     * block index: a parallelized RDD's tasks would carry its data (12 MiB per task for the MNIST
     * bench's minibatches, about 300 ms of a count job on the bench cluster).
     */
    static <T> long[] partitionSizes(JavaRDD<T> input) {
        List<Tuple2<Integer, Long>> counts = CachedBlocksRDD.of(input).mapPartitionsWithIndex((p, it) -> {
            long n = 0;
            while (it.hasNext()) {
                it.next();
                n++;
            }
            return List.of(new Tuple2<>(p, n)).iterator();
        }, true).collect();
        long[] sizes = new long[input.getNumPartitions()];
        for (Tuple2<Integer, Long> c : counts) {
            sizes[c._1()] = c._2();
        }
        return sizes;
    }

    static long total(long[] sizes) {
        long sum = 0;
        for (long s : sizes) {
            sum += s;
        }
        return sum;
    }

    /** Whether {@code sizes} are already {@code partitions} partitions that differ by at most one. */
    static boolean isBalanced(long[] sizes, int partitions) {
        if (sizes.length != partitions) {
            return false;
        }
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (long s : sizes) {
            min = Math.min(min, s);
            max = Math.max(max, s);
        }
        return max - min <= 1;
    }

    /**
     * {@code input} in exactly {@code partitions} balanced partitions; {@code input} itself when it
     * already is (no shuffle).
     *
     * @param sizes the partition sizes of {@code input}, from {@link #partitionSizes}
     */
    static <T> JavaRDD<T> into(JavaRDD<T> input, int partitions, long[] sizes) {
        if (partitions < 1) {
            throw new IllegalArgumentException("number of partitions must be >= 1, got " + partitions);
        }
        if (isBalanced(sizes, partitions)) {
            return input;
        }
        long[] offsets = new long[sizes.length];
        for (int p = 1; p < sizes.length; p++) {
            offsets[p] = offsets[p - 1] + sizes[p - 1];
        }
        // a persisted RDD read by block index, as in partitionSizes
        JavaRDD<Tuple2<Long, T>> indexed = CachedBlocksRDD.of(input).mapPartitionsWithIndex((p, it) -> new Iterator<Tuple2<Long, T>>() {
            private long next = offsets[p];

            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public Tuple2<Long, T> next() {
                return new Tuple2<>(next++, it.next());
            }
        }, false);
        // sorting by index within each partition restores the original order (spills to disk if needed)
        return JavaPairRDD.fromJavaRDD(indexed)
                .repartitionAndSortWithinPartitions(new IndexPartitioner(partitions))
                .values();
    }

    /** Sends global index {@code i} to partition {@code i mod n}. */
    static final class IndexPartitioner extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final int partitions;

        IndexPartitioner(int partitions) {
            this.partitions = partitions;
        }

        @Override
        public int numPartitions() {
            return partitions;
        }

        @Override
        public int getPartition(Object key) {
            return (int) Math.floorMod((Long) key, (long) partitions);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof IndexPartitioner p && p.partitions == partitions;
        }

        @Override
        public int hashCode() {
            return partitions;
        }
    }
}
