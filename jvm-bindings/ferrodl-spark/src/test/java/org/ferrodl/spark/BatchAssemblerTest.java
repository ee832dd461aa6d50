package org.ferrodl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.spark.impl.common.BalancedSplitter;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.junit.jupiter.api.Test;

/** Invariant 5: workers assemble exactly batchSizePerWorker examples, in order. */
class BatchAssemblerTest {

    @Test
    void mergesSmallAndSplitsLargeDataSetsIntoExactBatchesInOrder() {
        List<DataSet> parts = new ArrayList<>();
        int[] sizes = {3, 1, 10, 2, 7, 1};
        for (int i = 0; i < sizes.length; i++) {
            parts.addAll(SparkTestSupport.data(1, sizes[i], 100 + i));
        }
        DataSet all = DataSet.merge(parts);
        BatchAssembler<DataSet> batches = new BatchAssembler<>(parts.iterator(), 5, NetworkKind.MULTI_LAYER);
        List<DataSet> out = new ArrayList<>();
        batches.forEachRemaining(out::add);
        assertEquals(5, out.size(), "24 examples -> 4 batches of 5 and one of 4");
        for (int i = 0; i < 4; i++) {
            assertEquals(5, out.get(i).numExamples());
        }
        assertEquals(4, out.get(4).numExamples());
        assertEquals(all, DataSet.merge(out), "examples keep their order and values");
    }

    @Test
    void splitterDealsEqualContiguousShares() {
        BalancedSplitter s = new BalancedSplitter(22, 3, 2); // splits of 6: 6, 6, 6, 4
        assertEquals(4, s.numSplits());
        int[] perWorker = new int[3];
        for (long p = 0; p < 18; p++) {
            perWorker[s.workerOf(p)]++;
        }
        assertEquals(6, perWorker[0]);
        assertEquals(6, perWorker[1]);
        assertEquals(6, perWorker[2]);
        assertEquals(0, s.workerOf(18));
        assertEquals(0, s.workerOf(19));
        assertEquals(1, s.workerOf(20));
        assertEquals(1, s.workerOf(21));
        assertEquals(3, s.splitOf(21));
    }
}
