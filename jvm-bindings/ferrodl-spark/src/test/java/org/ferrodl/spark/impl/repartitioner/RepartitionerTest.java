package org.ferrodl.spark.impl.repartitioner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.api.Repartitioner;
import org.junit.jupiter.api.Test;

/** The repartitioners on a local Spark: partition counts, balanced sizes, no loss, order within partitions. */
class RepartitionerTest {

    private static JavaSparkContext sc() {
        return SparkTestSupport.sc();
    }

    private static List<Integer> range(int from, int to) {
        return IntStream.range(from, to).boxed().collect(Collectors.toList());
    }

    /** 0..n-1 in partitions of the given sizes (e.g. very skewed). */
    private static JavaRDD<Integer> skewed(int... sizes) {
        JavaRDD<Integer> rdd = null;
        int start = 0;
        for (int size : sizes) {
            JavaRDD<Integer> part = sc().parallelize(range(start, start + size), 1);
            rdd = rdd == null ? part : rdd.union(part);
            start += size;
        }
        return rdd;
    }

    private static int[] sizes(JavaRDD<?> rdd) {
        return rdd.glom().collect().stream().mapToInt(List::size).toArray();
    }

    /** Partition sizes differ by at most one, nothing is lost or duplicated, each partition keeps the input order. */
    private static void assertBalancedAndComplete(JavaRDD<Integer> out, int expectedPartitions, int n) {
        List<List<Integer>> parts = out.glom().collect();
        assertEquals(expectedPartitions, out.getNumPartitions());
        assertEquals(expectedPartitions, parts.size());
        int min = parts.stream().mapToInt(List::size).min().orElse(0);
        int max = parts.stream().mapToInt(List::size).max().orElse(0);
        assertTrue(max - min <= 1, "unbalanced sizes " + parts.stream().map(List::size).toList());
        List<Integer> all = new ArrayList<>();
        for (List<Integer> p : parts) {
            for (int i = 1; i < p.size(); i++) {
                assertTrue(p.get(i - 1) < p.get(i), "order not kept within a partition: " + p);
            }
            all.addAll(p);
        }
        all.sort(null);
        assertEquals(range(0, n), all);
    }

    // ------------------------------------------------------------------------------------- Equal

    @Test
    void equalMakesExactlyNumExecutorsBalancedPartitions() {
        EqualRepartitioner eq = new EqualRepartitioner();
        JavaRDD<Integer> skewed = skewed(50, 2, 0, 1, 17);
        assertArrayEquals(new int[] {50, 2, 0, 1, 17}, sizes(skewed));
        JavaRDD<Integer> out = eq.repartition(skewed, 1, 3);
        assertBalancedAndComplete(out, 3, 70);
        assertArrayEquals(new int[] {24, 23, 23}, sizes(out));
        // minObjectsPerPartition does not matter; more partitions than the input had
        assertBalancedAndComplete(eq.repartition(skewed, 1000, 8), 8, 70);
        // from a single partition
        assertBalancedAndComplete(eq.repartition(sc().parallelize(range(0, 10), 1), 1, 4), 4, 10);
        // fewer objects than partitions: some stay empty
        JavaRDD<Integer> tiny = eq.repartition(sc().parallelize(range(0, 2), 2), 1, 3);
        assertBalancedAndComplete(tiny, 3, 2);
    }

    @Test
    void equalLeavesBalancedDataAlone() {
        JavaRDD<Integer> balanced = skewed(4, 3, 4);
        assertSame(balanced, new EqualRepartitioner().repartition(balanced, 1, 3));
        // balanced, but not in the requested number of partitions: repartitioned
        assertBalancedAndComplete(new EqualRepartitioner().repartition(skewed(4, 4), 1, 3), 3, 8);
    }

    @Test
    void equalRefusesNoExecutors() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new EqualRepartitioner().repartition(skewed(3), 1, 0));
        assertTrue(e.getMessage().contains("numExecutors"), e.getMessage());
    }

    // ----------------------------------------------------------------------------------- Default

    @Test
    void defaultPartitionCountFormula() {
        DefaultRepartitioner d = new DefaultRepartitioner();
        assertEquals(4, d.numPartitions(100, 1, 4));   // one per worker
        assertEquals(4, d.numPartitions(100, 25, 4));
        assertEquals(3, d.numPartitions(100, 30, 4));  // each partition holds at least 30
        assertEquals(2, d.numPartitions(10, 4, 4));
        assertEquals(1, d.numPartitions(3, 4, 4));     // too few objects for one minibatch each: one partition
        assertEquals(1, d.numPartitions(0, 4, 4));
        assertEquals(1, d.numPartitions(100, 1, 0));   // non-positive arguments count as 1
        assertEquals(4, d.numPartitions(100, 0, 4));
        assertEquals(5000, d.numPartitions(1_000_000, 1, 10_000)); // the reference's maximum
        assertEquals(2, new DefaultRepartitioner(2).numPartitions(100, 1, 8));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DefaultRepartitioner(0));
        assertTrue(e.getMessage().contains("maxPartitions") && e.getMessage().contains("0"), e.getMessage());
    }

    @Test
    void defaultRepartitionsSkewedDataOnSpark() {
        JavaRDD<Integer> skewed = skewed(90, 0, 3, 7);
        DefaultRepartitioner d = new DefaultRepartitioner();
        JavaRDD<Integer> four = d.repartition(skewed, 4, 4);
        assertBalancedAndComplete(four, 4, 100);
        assertArrayEquals(new int[] {25, 25, 25, 25}, sizes(four));
        assertBalancedAndComplete(d.repartition(skewed, 30, 4), 3, 100);
        assertBalancedAndComplete(new DefaultRepartitioner(2).repartition(skewed, 1, 8), 2, 100);
        assertBalancedAndComplete(d.repartition(skewed, 1000, 4), 1, 100);
        // already balanced in the right count: untouched
        JavaRDD<Integer> balanced = skewed(25, 25, 25, 25);
        assertSame(balanced, d.repartition(balanced, 4, 4));
        // empty input: one empty partition
        JavaRDD<Integer> empty = d.repartition(sc().parallelize(new ArrayList<Integer>(), 3), 1, 4);
        assertEquals(1, empty.getNumPartitions());
        assertEquals(0, empty.count());
    }

    @Test
    void defaultRepartitionsDataSets() {
        List<DataSet> data = SparkTestSupport.data(10, 2, 5);
        JavaRDD<DataSet> rdd = sc().parallelize(data, 1);
        JavaRDD<DataSet> out = new DefaultRepartitioner().repartition(rdd, 1, 3);
        assertArrayEquals(new int[] {4, 3, 3}, sizes(out));
        List<List<DataSet>> parts = out.glom().collect();
        // round-robin in input order: partition p holds objects p, p + 3, p + 6, ...
        for (int p = 0; p < 3; p++) {
            for (int i = 0; i < parts.get(p).size(); i++) {
                DataSet expected = data.get(p + 3 * i);
                DataSet actual = parts.get(p).get(i);
                assertArrayEquals(expected.getFeatures().toFloatVector(), actual.getFeatures().toFloatVector());
                assertArrayEquals(expected.getLabels().toFloatVector(), actual.getLabels().toFloatVector());
            }
        }
    }

    // -------------------------------------------------------------------------------------- NoOp

    @Test
    void noOpKeepsThePartitioning() {
        JavaRDD<Integer> skewed = skewed(9, 1);
        assertSame(skewed, new NoOpRepartitioner().repartition(skewed, 4, 4));
        assertArrayEquals(new int[] {9, 1}, sizes(new NoOpRepartitioner().repartition(skewed, 4, 4)));
    }

    // ---------------------------------------------------------------------------- serialization

    @Test
    void repartitionersRoundTripThroughJacksonAndJava() throws Exception {
        ObjectMapper om = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
        for (Repartitioner r : List.of(new DefaultRepartitioner(), new DefaultRepartitioner(7),
                new EqualRepartitioner(), new NoOpRepartitioner())) {
            String json = om.writerFor(Repartitioner.class).writeValueAsString(r);
            assertEquals(r, om.readValue(json, Repartitioner.class), json);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
                out.writeObject(r);
            }
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
                Object back = in.readObject();
                assertEquals(r, back);
                assertEquals(r.hashCode(), back.hashCode());
            }
            assertTrue(r.toString().startsWith(r.getClass().getSimpleName()), r.toString());
        }
        assertEquals("{\"type\":\"default\",\"maxPartitions\":7}",
                om.writerFor(Repartitioner.class).writeValueAsString(new DefaultRepartitioner(7)));
        assertEquals("{\"type\":\"equal\"}", om.writerFor(Repartitioner.class).writeValueAsString(new EqualRepartitioner()));
        assertEquals("{\"type\":\"noop\"}", om.writerFor(Repartitioner.class).writeValueAsString(new NoOpRepartitioner()));
        assertNotEquals(new DefaultRepartitioner(7), new DefaultRepartitioner(8));
        assertThrows(Exception.class, () -> om.readValue("{\"type\":\"default\",\"maxPartitions\":0}", Repartitioner.class));
    }

    /** An element that counts how often it is serialized. */
    static final class Counted implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        static final java.util.concurrent.atomic.AtomicInteger SHIPPED = new java.util.concurrent.atomic.AtomicInteger();

        private void writeObject(ObjectOutputStream out) throws java.io.IOException {
            SHIPPED.incrementAndGet();
            out.defaultWriteObject();
        }
    }

    /**
     * Counting the partitions of a persisted parallelized RDD reads its cached blocks by index: the
     * tasks do not carry the RDD's data again (a parallelized RDD's partitions hold it; 12 MiB per
     * task for the MNIST bench, about 300 ms of a count job on the bench cluster).
     */
    @Test
    void aPersistedRddIsCountedWithoutShippingItsData() throws Exception {
        List<Counted> data = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            data.add(new Counted());
        }
        JavaRDD<Counted> cached = sc().parallelize(data, 3)
                .persist(org.apache.spark.storage.StorageLevel.MEMORY_ONLY());
        try {
            assertEquals(30, cached.count()); // the first job carries the data and caches it
            // a task over the RDD itself carries its partition, and with it the elements
            Counted.SHIPPED.set(0);
            new ObjectOutputStream(new ByteArrayOutputStream()).writeObject(cached.rdd().partitions()[0]);
            assertEquals(10, Counted.SHIPPED.get());
            Counted.SHIPPED.set(0);
            assertArrayEquals(new long[] {10, 10, 10}, DefaultRepartitioner.partitionSizes(cached));
            assertEquals(0, Counted.SHIPPED.get(), "elements serialized by the count");
        } finally {
            cached.unpersist(true);
        }
    }
}
