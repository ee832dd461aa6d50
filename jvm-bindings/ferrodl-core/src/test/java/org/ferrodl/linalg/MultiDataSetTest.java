package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.datasets.iterator.impl.ListMultiDataSetIterator;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.dataset.adapter.MultiDataSetIteratorAdapter;
import org.ferrodl.linalg.dataset.api.iterator.MultiDataSetIterator;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** MultiDataSet and its iterators in plain Java (no native code). */
class MultiDataSetTest {

    /**
     * n examples, two inputs ([i, 10i] and [100i]), two outputs (one-hot class i % 3, and [-i]); a
     * mask on input 1 ([1 if i even else 0]) and none on input 0; a labels mask on output 0 only.
     */
    static MultiDataSet sample(int n) {
        float[][] f0 = new float[n][];
        float[][] f1 = new float[n][];
        float[][] l0 = new float[n][3];
        float[][] l1 = new float[n][];
        float[][] m1 = new float[n][];
        float[][] lm0 = new float[n][];
        for (int i = 0; i < n; i++) {
            f0[i] = new float[] {i, 10 * i};
            f1[i] = new float[] {100 * i};
            l0[i][i % 3] = 1;
            l1[i] = new float[] {-i};
            m1[i] = new float[] {i % 2 == 0 ? 1 : 0};
            lm0[i] = new float[] {1, 1, i % 2};
        }
        return new MultiDataSet(new INDArray[] {Nd4j.create(f0), Nd4j.create(f1)},
                new INDArray[] {Nd4j.create(l0), Nd4j.create(l1)},
                new INDArray[] {null, Nd4j.create(m1)}, new INDArray[] {Nd4j.create(lm0), null});
    }

    @Test
    void accessorsAndCounts() {
        MultiDataSet m = sample(5);
        assertEquals(2, m.numFeatureArrays());
        assertEquals(2, m.numLabelsArrays());
        assertEquals(5, m.numExamples());
        assertTrue(m.hasMaskArrays());
        assertEquals(40f, m.getFeatures(0).getFloat(4, 1));
        assertEquals(-3f, m.getLabels(1).getFloat(3, 0));
        assertNull(m.getFeaturesMaskArray(0));
        assertEquals(0f, m.getFeaturesMaskArray(1).getFloat(1, 0));
        assertNull(m.getLabelsMaskArray(1));

        MultiDataSet plain = new MultiDataSet(Nd4j.zeros(3, 2), Nd4j.ones(3, 1));
        assertFalse(plain.hasMaskArrays());
        assertNull(plain.getFeaturesMaskArrays());
        assertNull(plain.getFeaturesMaskArray(0));
        // Setting one mask creates a list with null entries for the others.
        plain.setLabelsMaskArray(0, Nd4j.ones(3, 1));
        assertEquals(1, plain.getLabelsMaskArrays().length);
        assertTrue(plain.hasMaskArrays());

        MultiDataSet empty = new MultiDataSet();
        assertEquals(0, empty.numExamples());
        assertEquals(0, empty.numFeatureArrays());
        MultiDataSet unlabelled = new MultiDataSet(Nd4j.zeros(4, 2), null);
        assertEquals(0, unlabelled.numLabelsArrays());
        assertEquals(4, unlabelled.numExamples());
    }

    @Test
    void inconsistentArraysAreRefusedWithTheirNames() {
        DL4JInvalidInputException rows = assertThrows(DL4JInvalidInputException.class,
                () -> new MultiDataSet(new INDArray[] {Nd4j.zeros(4, 2), Nd4j.zeros(3, 1)},
                        new INDArray[] {Nd4j.zeros(4, 1)}));
        assertEquals("MultiDataSet: features[1] has 3 examples (shape [3, 1]) but features[0] has 4",
                rows.getMessage());
        DL4JInvalidInputException maskCount = assertThrows(DL4JInvalidInputException.class,
                () -> new MultiDataSet(new INDArray[] {Nd4j.zeros(4, 2)}, new INDArray[] {Nd4j.zeros(4, 1)},
                        new INDArray[] {null, null}, null));
        assertTrue(maskCount.getMessage().startsWith("MultiDataSet: featuresMaskArrays has 2 entries but there"
                + " are 1 features arrays"), maskCount.getMessage());
        DL4JInvalidInputException maskRows = assertThrows(DL4JInvalidInputException.class,
                () -> new MultiDataSet(new INDArray[] {Nd4j.zeros(4, 2)}, new INDArray[] {Nd4j.zeros(4, 1)},
                        null, new INDArray[] {Nd4j.ones(2, 1)}));
        assertTrue(maskRows.getMessage().startsWith("MultiDataSet: labelsMaskArrays[0] has 2 examples"),
                maskRows.getMessage());
        DL4JInvalidInputException nullFeatures = assertThrows(DL4JInvalidInputException.class,
                () -> new MultiDataSet(new INDArray[] {null}, new INDArray[0]));
        assertTrue(nullFeatures.getMessage().contains("features[0] is null"), nullFeatures.getMessage());
    }

    @Test
    void fromDataSetSharesTheArrays() {
        DataSet d = new DataSet(Nd4j.zeros(3, 2), Nd4j.ones(3, 4), null, Nd4j.ones(3, 1));
        MultiDataSet m = MultiDataSet.fromDataSet(d);
        assertEquals(1, m.numFeatureArrays());
        assertEquals(1, m.numLabelsArrays());
        assertSame(d.getFeatures(), m.getFeatures(0));
        assertSame(d.getLabels(), m.getLabels(0));
        assertNull(m.getFeaturesMaskArrays());
        assertSame(d.getLabelsMaskArray(), m.getLabelsMaskArray(0));
    }

    @Test
    void rangeListBatchSplitAndMerge() {
        MultiDataSet m = sample(7);
        MultiDataSet r = m.getRange(2, 5);
        assertEquals(3, r.numExamples());
        assertEquals(20f, r.getFeatures(0).getFloat(0, 1));
        assertEquals(200f, r.getFeatures(1).getFloat(0, 0));
        assertEquals(-4f, r.getLabels(1).getFloat(2, 0));
        assertEquals(1f, r.getFeaturesMaskArray(1).getFloat(0, 0));
        assertNull(r.getFeaturesMaskArray(0));

        List<org.ferrodl.linalg.dataset.api.MultiDataSet> list = m.asList();
        assertEquals(7, list.size());
        assertEquals(600f, list.get(6).getFeatures(1).getFloat(0, 0));
        assertEquals(m, MultiDataSet.merge(list));

        List<MultiDataSet> batches = m.batchBy(3);
        assertEquals(3, batches.size());
        assertEquals(1, batches.get(2).numExamples());
        assertEquals(m, MultiDataSet.merge(batches));

        MultiDataSet[] split = m.splitTestAndTrain(5);
        assertEquals(5, split[0].numExamples());
        assertEquals(2, split[1].numExamples());
        assertEquals(-5f, split[1].getLabels(1).getFloat(0, 0));
        assertThrows(IllegalArgumentException.class, () -> m.splitTestAndTrain(7));
    }

    @Test
    void mergeFillsMissingMasksWithOnesAndChecksCounts() {
        MultiDataSet withMask = sample(2);
        MultiDataSet noMask = new MultiDataSet(new INDArray[] {Nd4j.ones(3, 2), Nd4j.ones(3, 1)},
                new INDArray[] {Nd4j.zeros(3, 3), Nd4j.zeros(3, 1)});
        MultiDataSet merged = MultiDataSet.merge(withMask, noMask);
        assertEquals(5, merged.numExamples());
        assertNull(merged.getFeaturesMaskArray(0));
        assertArrayEquals(new float[] {1, 0, 1, 1, 1}, merged.getFeaturesMaskArray(1).toFloatVector());
        assertArrayEquals(new long[] {5, 3}, merged.getLabelsMaskArray(0).shape());
        assertEquals(0f, merged.getLabelsMaskArray(0).getFloat(0, 2));
        assertEquals(1f, merged.getLabelsMaskArray(0).getFloat(4, 2));
        assertNull(merged.getLabelsMaskArray(1));
        // Neither part has masks: the merged lists stay null.
        assertNull(MultiDataSet.merge(noMask, noMask).getFeaturesMaskArrays());

        MultiDataSet oneInput = new MultiDataSet(Nd4j.ones(1, 2), Nd4j.ones(1, 3));
        DL4JInvalidInputException counts = assertThrows(DL4JInvalidInputException.class,
                () -> MultiDataSet.merge(withMask, oneInput));
        assertEquals("cannot merge MultiDataSets: the first has 2 features and 2 labels arrays, number 1 has 1 and 1",
                counts.getMessage());
        MultiDataSet wide = new MultiDataSet(new INDArray[] {Nd4j.ones(1, 5), Nd4j.ones(1, 1)},
                new INDArray[] {Nd4j.zeros(1, 3), Nd4j.zeros(1, 1)});
        DL4JInvalidInputException shape = assertThrows(DL4JInvalidInputException.class,
                () -> MultiDataSet.merge(noMask, wide));
        assertTrue(shape.getMessage().startsWith("cannot merge MultiDataSets: features[0]"), shape.getMessage());
    }

    @Test
    void shuffleKeepsExamplesTogether() {
        MultiDataSet m = sample(20);
        MultiDataSet s = m.copy();
        s.shuffle(42);
        assertNotEquals(m, s);
        for (int i = 0; i < 20; i++) {
            float x = s.getFeatures(0).getFloat(i, 0);
            assertEquals(10 * x, s.getFeatures(0).getFloat(i, 1));
            assertEquals(100 * x, s.getFeatures(1).getFloat(i, 0));
            assertEquals(-x, s.getLabels(1).getFloat(i, 0), 0f);
            assertEquals(1f, s.getLabels(0).getFloat(i, (int) x % 3));
            assertEquals(x % 2 == 0 ? 1f : 0f, s.getFeaturesMaskArray(1).getFloat(i, 0));
            assertEquals(x % 2, s.getLabelsMaskArray(0).getFloat(i, 2));
        }
        MultiDataSet again = m.copy();
        again.shuffle(42);
        assertEquals(s, again);
    }

    @Test
    void javaSerializationAndKryoRoundTrip() throws Exception {
        MultiDataSet m = sample(4);
        assertEquals(m, SerializationUtil.javaRoundTrip(m));
        assertEquals(m, SerializationUtil.kryoRoundTrip(m));
        MultiDataSet noMasks = new MultiDataSet(Nd4j.ones(2, 3), Nd4j.zeros(2, 1));
        MultiDataSet back = (MultiDataSet) SerializationUtil.kryoRoundTrip(noMasks);
        assertEquals(noMasks, back);
        assertNull(back.getFeaturesMaskArrays());
        List<MultiDataSet> list = new ArrayList<>(sample(3).batchBy(1));
        assertEquals(list, SerializationUtil.kryoRoundTrip(list));
    }

    @Test
    void listIteratorBatchesResetsAndPreProcessesCopies() {
        MultiDataSet m = sample(7);
        List<org.ferrodl.linalg.dataset.api.MultiDataSet> examples = m.asList();
        ListMultiDataSetIterator it = new ListMultiDataSetIterator(examples, 3);
        it.setPreProcessor(x -> x.getFeatures(1).muli(2));
        List<Integer> sizes = new ArrayList<>();
        List<MultiDataSet> got = new ArrayList<>();
        while (it.hasNext()) {
            MultiDataSet b = (MultiDataSet) it.next();
            sizes.add(b.numExamples());
            got.add(b);
        }
        assertEquals(List.of(3, 3, 1), sizes);
        assertEquals(1200f, got.get(2).getFeatures(1).getFloat(0, 0));
        // The pre-processor worked on copies: the list is unchanged.
        assertEquals(600f, examples.get(6).getFeatures(1).getFloat(0, 0));
        assertThrows(NoSuchElementException.class, it::next);
        it.reset();
        assertEquals(2, it.next(2).numExamples());
        assertTrue(it.resetSupported());
    }

    @Test
    void adapterTurnsDataSetsIntoSingleInputMultiDataSets() {
        List<DataSet> data = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            data.add(new DataSet(Nd4j.create(new float[] {i, i}, 1, 2), Nd4j.create(new float[] {i}, 1, 1)));
        }
        MultiDataSetIterator it = new MultiDataSetIteratorAdapter(new ListDataSetIterator(data, 2));
        int seen = 0;
        while (it.hasNext()) {
            org.ferrodl.linalg.dataset.api.MultiDataSet b = it.next();
            assertEquals(1, b.numFeatureArrays());
            assertEquals(1, b.numLabelsArrays());
            assertEquals(2, b.numExamples());
            assertEquals(seen, b.getLabels(0).getFloat(0, 0), 0f);
            seen += 2;
        }
        assertEquals(4, seen);
        it.reset();
        assertTrue(it.hasNext());
    }
}
