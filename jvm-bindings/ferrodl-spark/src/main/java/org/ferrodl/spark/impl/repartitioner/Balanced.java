package org.ferrodl.spark.impl.repartitioner;

import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaRDD;
import scala.Tuple2;

/** Deterministic balanced repartitioning: object i goes to partition i mod n, order kept within. */
final class Balanced {
    private Balanced() {}

    static <T> JavaRDD<T> into(JavaRDD<T> input, int partitions) {
        return input.zipWithIndex()
                .mapToPair(t -> new Tuple2<>(t._2(), t._1()))
                .partitionBy(new HashPartitioner(partitions))
                .mapPartitions(it -> {
                    // partitionBy does not keep order inside a partition: restore the index order
                    java.util.List<Tuple2<Long, T>> items = new java.util.ArrayList<>();
                    it.forEachRemaining(items::add);
                    items.sort(java.util.Comparator.comparing(Tuple2::_1));
                    return items.stream().map(Tuple2::_2).iterator();
                }, true);
    }
}
