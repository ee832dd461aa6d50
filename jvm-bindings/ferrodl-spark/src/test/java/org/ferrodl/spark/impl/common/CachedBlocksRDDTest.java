package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.Partition;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.spark.SparkTestSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link CachedBlocksRDD}: a task over a cached parallelized RDD carries its partition by index
 * (not its data) while the block is cached, and the data again once the block is gone, so a lost
 * block is recomputed as Spark always did.
 */
class CachedBlocksRDDTest {

    private static int serializedBytes(Partition p) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(p);
        }
        return bytes.size();
    }

    @Test
    void aCachedBlockTravelsByIndexAndALostOneWithItsData() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        List<float[]> data = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            float[] x = new float[1000];
            x[0] = i;
            data.add(x);
        }
        JavaRDD<float[]> plain = sc.parallelize(data, 2);
        assertSame(plain, CachedBlocksRDD.of(plain), "an RDD that is not persisted is used as it is");

        JavaRDD<float[]> cached = sc.parallelize(data, 2).persist(StorageLevel.MEMORY_ONLY());
        JavaRDD<float[]> view = CachedBlocksRDD.of(cached);
        // before the first job nothing is cached: the slots carry their data, and the job caches it
        Partition[] slots = view.rdd().partitions();
        assertTrue(serializedBytes(slots[0]) > 20 * 4000, "uncached: the data travels");
        assertEquals(List.of(20, 20), view.mapPartitions(it -> {
            int n = 0;
            for (; it.hasNext(); it.next()) {
                n++;
            }
            return List.of(n).iterator();
        }).collect());
        assertTrue(CachedBlocksRDD.cachedSomewhere(cached.id(), 0) && CachedBlocksRDD.cachedSomewhere(cached.id(), 1));
        for (Partition s : slots) {
            assertTrue(((CachedBlocksRDD.Slot) s).carriesSource());
            assertTrue(serializedBytes(s) < 1000, "cached: the index alone travels, " + serializedBytes(s) + " bytes");
        }
        List<Float> firsts = view.map(x -> x[0]).collect();
        assertEquals(40, firsts.size());
        for (int i = 0; i < 40; i++) {
            assertEquals(i, firsts.get(i), 0f);
        }

        // block 1 dropped: its slot carries the data again and the job recomputes it
        SparkEnv.get().blockManager().removeBlock(new RDDBlockId(cached.id(), 1), true);
        assertFalse(CachedBlocksRDD.cachedSomewhere(cached.id(), 1));
        assertTrue(serializedBytes(slots[1]) > 20 * 4000);
        assertTrue(serializedBytes(slots[0]) < 1000);
        assertEquals(firsts, view.map(x -> x[0]).collect());
        cached.unpersist(true);
    }
}
