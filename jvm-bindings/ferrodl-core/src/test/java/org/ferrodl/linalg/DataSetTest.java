package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.SplitTestAndTrain;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

class DataSetTest {

    /** n examples, features [i, 10i], one-hot labels of class i % 3. */
    static DataSet sample(int n) {
        float[][] f = new float[n][];
        float[][] l = new float[n][3];
        for (int i = 0; i < n; i++) {
            f[i] = new float[] {i, 10 * i};
            l[i][i % 3] = 1;
        }
        return new DataSet(Nd4j.create(f), Nd4j.create(l));
    }

    @Test
    void accessorsAndRowCheck() {
        DataSet d = sample(5);
        assertEquals(5, d.numExamples());
        assertEquals(2, d.numInputs());
        assertEquals(3, d.numOutcomes());
        assertFalse(d.hasMaskArrays());
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> new DataSet(Nd4j.zeros(4, 2), Nd4j.zeros(3, 3)));
        assertTrue(e.getMessage().contains("labels has 3 examples"), e.getMessage());
    }

    @Test
    void rangeListBatchAndSplit() {
        DataSet d = sample(7);
        DataSet r = d.getRange(2, 5);
        assertEquals(3, r.numExamples());
        assertEquals(20f, r.getFeatures().getFloat(0, 1));
        assertEquals(1f, r.getLabels().getFloat(0, 2));

        List<DataSet> list = d.asList();
        assertEquals(7, list.size());
        assertEquals(6f, list.get(6).getFeatures().getFloat(0, 0));
        assertEquals(d, DataSet.merge(list));

        List<DataSet> batches = d.batchBy(3);
        assertEquals(3, batches.size());
        assertEquals(1, batches.get(2).numExamples());
        assertEquals(d, DataSet.merge(batches));

        SplitTestAndTrain s = d.splitTestAndTrain(5);
        assertEquals(5, s.getTrain().numExamples());
        assertEquals(2, s.getTest().numExamples());
        assertEquals(5f, s.getTest().getFeatures().getFloat(0, 0));
        assertThrows(IllegalArgumentException.class, () -> d.splitTestAndTrain(7));
    }

    @Test
    void mergeFillsMissingMasksWithOnes() {
        DataSet a = sample(2);
        DataSet b = sample(3);
        b.setLabelsMaskArray(Nd4j.create(new float[] {0, 1, 0}, 3, 1));
        DataSet m = DataSet.merge(List.of(a, b));
        assertEquals(5, m.numExamples());
        assertEquals(Nd4j.create(new float[] {1, 1, 0, 1, 0}, 5, 1), m.getLabelsMaskArray());
        assertNull(m.getFeaturesMaskArray());
        DataSet wrongWidth = new DataSet(Nd4j.zeros(1, 5), Nd4j.zeros(1, 3));
        assertThrows(DL4JInvalidInputException.class, () -> DataSet.merge(List.of(a, wrongWidth)));
    }

    @Test
    void shuffleKeepsPairsTogether() {
        DataSet d = sample(9);
        d.shuffle(123);
        assertEquals(9, d.numExamples());
        float sum = 0;
        for (int i = 0; i < 9; i++) {
            float x = d.getFeatures().getFloat(i, 0);
            sum += x;
            assertEquals(10 * x, d.getFeatures().getFloat(i, 1));
            assertEquals(1f, d.getLabels().getFloat(i, ((int) x) % 3));
        }
        assertEquals(36f, sum);
    }

    @Test
    void javaSerializationAndKryoRoundTripWithMasks() throws Exception {
        DataSet d = sample(4);
        d.setFeaturesMaskArray(Nd4j.ones(4, 2));
        d.setLabelsMaskArray(Nd4j.create(new float[] {1, 0, 1, 1}, 4, 1));
        DataSet j = SerializationUtil.javaRoundTrip(d);
        assertEquals(d, j);
        assertNotSame(d.getFeatures(), j.getFeatures());
        assertEquals(d, SerializationUtil.kryoRoundTrip(d));
        DataSet noMask = sample(3);
        assertEquals(noMask, SerializationUtil.kryoRoundTrip(noMask));
        List<DataSet> list = new ArrayList<>(noMask.asList());
        assertEquals(list, SerializationUtil.kryoRoundTrip(list));
    }

    @Test
    void listDataSetIteratorMergesBatchEntries() {
        DataSet d = sample(7);
        ListDataSetIterator it = new ListDataSetIterator(d.asList(), 3);
        assertEquals(2, it.inputColumns());
        assertEquals(3, it.totalOutcomes());
        assertEquals(3, it.batch());
        List<Integer> sizes = new ArrayList<>();
        List<DataSet> seen = new ArrayList<>();
        while (it.hasNext()) {
            DataSet b = it.next();
            sizes.add(b.numExamples());
            seen.add(b);
        }
        assertEquals(List.of(3, 3, 1), sizes);
        assertEquals(d, DataSet.merge(seen));
        assertTrue(it.resetSupported());
        it.reset();
        it.setPreProcessor(ds -> ds.getFeatures().muli(2));
        INDArray first = it.next().getFeatures();
        assertEquals(20f, first.getFloat(1, 1));
        assertEquals(10f, d.getFeatures().getFloat(1, 1), "the pre-processor must not modify the source list");
    }
}
