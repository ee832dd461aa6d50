package org.ferrodl.spark.impl.paramavg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.spark.Partition;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.impl.common.BalancedSplitter;
import org.ferrodl.spark.impl.common.CachedBlocksRDD;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * {@link DealtRDD} as a cluster's executors run it: the parent's partitions known only by index
 * (the task does not carry them), read from the cached blocks. It deals exactly as the driver's
 * listing does, asks for each task to run where its block is, and says clearly when a block it
 * needs is no longer cached.
 */
class DealtRDDTest {
    private static final int WORKERS = 3;

    @Test
    void readsCachedBlocksByIndexAsTheDriverDoesAndFailsClearlyWhenOneIsGone() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        // 23 objects, 2 per worker and split: a short last split leaves a worker without objects
        int n = 23;
        BalancedSplitter splitter = new BalancedSplitter(n, WORKERS, 2);
        List<Tuple2<Placed, Integer>> objects = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // positions shuffled (as under rngSeed), partition: the parallelized slice it lands in
            objects.add(new Tuple2<>(new Placed((i * 7L) % n, i * WORKERS / n), 100 + i));
        }
        JavaRDD<Tuple2<Placed, Integer>> cached = sc.parallelize(objects, WORKERS).cache();
        assertEquals(n, cached.count());
        AveragingRounds.WorkerPartitioner dealer = new AveragingRounds.WorkerPartitioner(splitter, WORKERS, false);

        String[][] where = CachedBlocksRDD.blockLocations(cached.id(), WORKERS);
        assertNotNull(where, "every block is cached");
        // parallelize slices 23 objects as 7, 8, 8; every worker's objects lie in several of them
        int[] positions = new int[n];
        for (int i = 0; i < n; i++) {
            positions[i] = (int) objects.get(i)._1().position();
        }
        int[][] sources = splitter.partitionsOfWorkers(new long[] {7, 8, 8}, positions);
        for (int[] read : sources) {
            assertTrue(read.length > 1, "each worker reads several blocks here: " + java.util.Arrays.toString(read));
        }
        DealtRDD<Integer> inDriver = new DealtRDD<>(cached.rdd(), dealer, sources, cached.id(), null, true);
        DealtRDD<Integer> byIndex = new DealtRDD<>(cached.rdd(), dealer, sources, cached.id(), where, false);
        try {
            List<List<Tuple2<Placed, Integer>>> expected = inDriver.toJavaRDD().glom().collect();
            List<List<Tuple2<Placed, Integer>>> got = byIndex.toJavaRDD().glom().collect();
            assertEquals(expected, got);
            TreeSet<Long> seen = new TreeSet<>();
            for (int w = 0; w < WORKERS; w++) {
                for (Tuple2<Placed, Integer> t : got.get(w)) {
                    assertEquals(w, splitter.workerOf(t._1().position()), "object " + t + " dealt to worker " + w);
                    assertTrue(seen.add(t._1().position()));
                }
                Partition p = byIndex.partitions()[w];
                scala.collection.immutable.List<String> locations = byIndex.getPreferredLocations(p);
                List<String> preferred = new ArrayList<>();
                for (int i = 0; i < locations.size(); i++) {
                    preferred.add(locations.apply(i));
                }
                assertEquals(List.of(where[w]), preferred);
                assertTrue(preferred.get(0).startsWith("executor_"), preferred.get(0));
            }
            assertEquals(n, seen.size(), "every object dealt once");
        } finally {
            inDriver.release();
        }

        cached.unpersist(true);
        assertNull(CachedBlocksRDD.blockLocations(cached.id(), WORKERS), "nothing cached any more");
        Exception e = assertThrows(Exception.class, () -> byIndex.toJavaRDD().count());
        String all = causes(e);
        assertTrue(all.contains("is no longer cached") && all.contains("MEMORY_AND_DISK"), all);
    }

    /**
     * With the in-place positions of equal partitions each worker reads only its own block: it still
     * deals every object once, exactly as the driver's listing, when the other blocks are gone.
     */
    @Test
    void inPlacePositionsReadOnlyTheWorkersOwnBlock() {
        JavaSparkContext sc = SparkTestSupport.sc();
        int perPartition = 9;
        int n = WORKERS * perPartition;
        long[] sizes = {perPartition, perPartition, perPartition};
        // 2 objects per worker and split: 5 splits, the last one short (1 object per worker)
        BalancedSplitter splitter = new BalancedSplitter(n, WORKERS, 2);
        int[] positions = BalancedSplitter.inPlacePositions(sizes, 2, 17L);
        List<Tuple2<Placed, Integer>> objects = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            objects.add(new Tuple2<>(new Placed(positions[i], i / perPartition), 100 + i));
        }
        JavaRDD<Tuple2<Placed, Integer>> cached = sc.parallelize(objects, WORKERS).cache();
        assertEquals(n, cached.count());
        int[][] sources = splitter.partitionsOfWorkers(sizes, positions);
        for (int w = 0; w < WORKERS; w++) {
            assertEquals(List.of(w), java.util.Arrays.stream(sources[w]).boxed().toList(), "worker " + w);
        }
        AveragingRounds.WorkerPartitioner dealer = new AveragingRounds.WorkerPartitioner(splitter, WORKERS, false);
        String[][] where = CachedBlocksRDD.blockLocations(cached.id(), WORKERS);
        DealtRDD<Integer> inDriver = new DealtRDD<>(cached.rdd(), dealer, sources, cached.id(), null, true);
        List<List<Tuple2<Placed, Integer>>> expected;
        try {
            expected = inDriver.toJavaRDD().glom().collect();
        } finally {
            inDriver.release();
        }
        for (int w = 0; w < WORKERS; w++) {
            assertEquals(perPartition, expected.get(w).size());
            for (Tuple2<Placed, Integer> t : expected.get(w)) {
                assertEquals(w, t._1().partition(), "worker " + w + " got " + t);
                assertEquals(w, splitter.workerOf(t._1().position()));
            }
        }
        // worker 1 alone, with blocks 0 and 2 gone: it needs only its own block
        org.apache.spark.storage.BlockManager bm = org.apache.spark.SparkEnv.get().blockManager();
        bm.removeBlock(new org.apache.spark.storage.RDDBlockId(cached.id(), 0), true);
        bm.removeBlock(new org.apache.spark.storage.RDDBlockId(cached.id(), 2), true);
        DealtRDD<Integer> byIndex = new DealtRDD<>(cached.rdd(), dealer, sources, cached.id(), where, false);
        List<Tuple2<Placed, Integer>> one = byIndex.toJavaRDD()
                .mapPartitionsWithIndex((w, it) -> w == 1 ? it : java.util.Collections.emptyIterator(), false)
                .collect();
        assertEquals(expected.get(1), one);
        cached.unpersist(true);
    }

    private static String causes(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c).append('\n');
        }
        return b.toString();
    }
}
