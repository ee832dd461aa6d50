package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@link BalancedSplitter#inPlacePositions}: one partition per worker, dealt where it lies. */
class BalancedSplitterTest {

    /** Worker of each object (by RDD index) under the given positions. */
    private static int[] workers(BalancedSplitter splitter, int[] positions) {
        int[] out = new int[positions.length];
        for (int i = 0; i < positions.length; i++) {
            out[i] = splitter.workerOf(positions[i]);
        }
        return out;
    }

    private static void assertPermutation(int[] positions) {
        int[] sorted = positions.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            assertEquals(i, sorted[i], "positions are a permutation of 0.." + (sorted.length - 1));
        }
    }

    @Test
    void equalPartitionsStayWithTheirWorkerInEverySplit() {
        for (Long seed : new Long[] {null, 3L, 12345L}) {
            // 4 workers × 25 objects, 3 per worker and split: 8 full splits and a short one of 1 each
            long[] sizes = {25, 25, 25, 25};
            int[] positions = BalancedSplitter.inPlacePositions(sizes, 3, seed);
            assertPermutation(positions);
            BalancedSplitter splitter = new BalancedSplitter(100, 4, 3);
            int[] worker = workers(splitter, positions);
            for (int i = 0; i < 100; i++) {
                assertEquals(i / 25, worker[i], "object " + i + " (seed " + seed + ")");
            }
            int[][] reads = splitter.partitionsOfWorkers(sizes, positions);
            for (int w = 0; w < 4; w++) {
                assertArrayEquals(new int[] {w}, reads[w]);
            }
            // every split holds 3 objects of each partition (the last one 1 of each)
            for (int i = 0; i < 100; i++) {
                int run = seed == null ? (i % 25) / 3 : -1;
                if (run >= 0) {
                    assertEquals(run, splitter.splitOf(positions[i]), "object " + i + " in run " + run);
                }
            }
        }
    }

    @Test
    void withOnePartitionItIsRddOrderOrTheSeededShuffle() {
        int[] plain = BalancedSplitter.inPlacePositions(new long[] {13}, 4, null);
        for (int i = 0; i < 13; i++) {
            assertEquals(i, plain[i]);
        }
        assertArrayEquals(BalancedSplitter.shuffledPositions(13, 77), BalancedSplitter.inPlacePositions(new long[] {13}, 4, 77L));
    }

    @Test
    void seedsShuffleWithinPartitionsAndDifferByEpoch() {
        long[] sizes = {40, 40};
        int[] a = BalancedSplitter.inPlacePositions(sizes, 5, 10L);
        int[] b = BalancedSplitter.inPlacePositions(sizes, 5, 11L);
        assertArrayEquals(a, BalancedSplitter.inPlacePositions(sizes, 5, 10L), "repeatable");
        assertFalse(Arrays.equals(a, b), "another epoch, another order");
        assertFalse(Arrays.equals(a, BalancedSplitter.inPlacePositions(sizes, 5, null)), "shuffled");
    }

    @Test
    void unequalPartitionsCrossOverOnlyByTheirExcess() {
        long[] sizes = {10, 7, 7};
        int[] positions = BalancedSplitter.inPlacePositions(sizes, 2, 5L);
        assertPermutation(positions);
        BalancedSplitter splitter = new BalancedSplitter(24, 3, 2);
        int[] worker = workers(splitter, positions);
        int crossed = 0;
        long index = 0;
        for (int p = 0; p < sizes.length; p++) {
            for (long i = 0; i < sizes[p]; i++, index++) {
                crossed += worker[(int) index] == p ? 0 : 1;
            }
        }
        assertTrue(crossed > 0 && crossed <= 3, "objects beyond the shortest partition's runs: " + crossed);
        int[][] reads = splitter.partitionsOfWorkers(sizes, positions);
        assertArrayEquals(new int[] {0}, reads[0]);
        assertTrue(reads[1].length + reads[2].length > 2, Arrays.deepToString(reads));
    }
}
