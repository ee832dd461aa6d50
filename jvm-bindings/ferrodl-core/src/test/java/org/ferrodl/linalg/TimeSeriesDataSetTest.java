package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.dataset.SplitTestAndTrain;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/**
 * Time-series DataSets: {@code [N, C, T]} features and labels with {@code [N, T]} masks through merge
 * (padding ragged lengths as the reference does), ranges, splits, shuffles, the native file format,
 * Java serialization and Kryo; and time-series evaluation skipping masked steps.
 */
class TimeSeriesDataSetTest {

    /** {@code [n, c, t]} with value {@code base + 100·i + 10·ch + s} at (i, ch, s). */
    private static INDArray series(int n, int c, int t, float base) {
        float[] v = new float[n * c * t];
        for (int i = 0; i < n; i++) {
            for (int ch = 0; ch < c; ch++) {
                for (int s = 0; s < t; s++) {
                    v[(i * c + ch) * t + s] = base + 100 * i + 10 * ch + s;
                }
            }
        }
        return new NDArray(v, n, c, t);
    }

    @Test
    void mergePadsRaggedSeriesAndMasksThePadding() {
        DataSet a = new DataSet(series(2, 3, 4, 0), series(2, 2, 4, 1000));
        INDArray bLabelsMask = Nd4j.create(new float[] {1, 1, 0, 1, 1, 0}, 1, 6);
        DataSet b = new DataSet(series(1, 3, 6, 5000), series(1, 2, 6, 6000), null, bLabelsMask);
        DataSet m = DataSet.merge(List.of(a, b));
        assertArrayEquals(new long[] {3, 3, 6}, m.getFeatures().shape());
        assertArrayEquals(new long[] {3, 2, 6}, m.getLabels().shape());
        for (int i = 0; i < 2; i++) {
            for (int ch = 0; ch < 3; ch++) {
                for (int s = 0; s < 6; s++) {
                    float want = s < 4 ? 100 * i + 10 * ch + s : 0f;
                    assertEquals(want, m.getFeatures().getFloat(i, ch, s), 0f, "a[" + i + "," + ch + "," + s + "]");
                }
            }
        }
        assertEquals(5000 + 10 * 2 + 5, m.getFeatures().getFloat(2, 2, 5), 0f);
        assertEquals(Nd4j.create(new float[] {1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1}, 3, 6),
                m.getFeaturesMaskArray());
        assertEquals(Nd4j.create(new float[] {1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0}, 3, 6),
                m.getLabelsMaskArray(), "b's own labels mask is kept on its steps");
    }

    @Test
    void mergeOfEqualLengthsKeepsMasksOnlyWhereGiven() {
        DataSet a = new DataSet(series(2, 3, 4, 0), series(2, 2, 4, 0));
        DataSet b = new DataSet(series(1, 3, 4, 0), series(1, 2, 4, 0), Nd4j.create(new float[] {1, 1, 0, 0}, 1, 4),
                null);
        DataSet m = DataSet.merge(List.of(a, b));
        assertArrayEquals(new long[] {3, 3, 4}, m.getFeatures().shape());
        assertEquals(Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, 3, 4), m.getFeaturesMaskArray());
        assertNull(m.getLabelsMaskArray());
        assertNull(DataSet.merge(List.of(a, a)).getFeaturesMaskArray());
        // sequence classification: 3-D features, 2-D labels
        DataSet c = new DataSet(series(1, 3, 7, 0), Nd4j.create(new float[] {0, 1}, 1, 2));
        DataSet d = new DataSet(series(2, 3, 4, 0), Nd4j.create(new float[] {1, 0, 0, 1}, 2, 2));
        DataSet cd = DataSet.merge(List.of(c, d));
        assertArrayEquals(new long[] {3, 3, 7}, cd.getFeatures().shape());
        assertArrayEquals(new long[] {3, 2}, cd.getLabels().shape());
        assertNull(cd.getLabelsMaskArray());
        assertEquals(Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0}, 3, 7),
                cd.getFeaturesMaskArray());
    }

    @Test
    void mergeRefusesAMaskThatDoesNotFitItsSeries() {
        DataSet a = new DataSet(series(2, 3, 4, 0), series(2, 2, 4, 0), Nd4j.ones(2, 5), null);
        DataSet b = new DataSet(series(1, 3, 6, 0), series(1, 2, 6, 0));
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class, () -> DataSet.merge(List.of(a, b)));
        assertTrue(e.getMessage().contains("[2, 3, 4]") && e.getMessage().contains("[2, 5]")
                && e.getMessage().contains("expected [2, 4]"), e.getMessage());
        DataSet wide = new DataSet(series(1, 2, 6, 0), series(1, 2, 6, 0));
        e = assertThrows(DL4JInvalidInputException.class, () -> DataSet.merge(List.of(a, wide)));
        assertTrue(e.getMessage().contains("different sizes"), e.getMessage());
    }

    @Test
    void multiDataSetMergePadsToo() {
        MultiDataSet a = new MultiDataSet(new INDArray[] {series(1, 2, 3, 0), Nd4j.ones(1, 4)},
                new INDArray[] {series(1, 1, 3, 0)});
        MultiDataSet b = new MultiDataSet(new INDArray[] {series(2, 2, 5, 0), Nd4j.zeros(2, 4)},
                new INDArray[] {series(2, 1, 5, 0)});
        MultiDataSet m = MultiDataSet.merge(a, b);
        assertArrayEquals(new long[] {3, 2, 5}, m.getFeatures(0).shape());
        assertEquals(Nd4j.create(new float[] {1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 3, 5),
                m.getFeaturesMaskArrays()[0]);
        assertNull(m.getFeaturesMaskArrays()[1]);
        assertEquals(m.getFeaturesMaskArrays()[0], m.getLabelsMaskArrays()[0]);
    }

    @Test
    void rangesSplitsAndShuffleKeepMasksWithTheirExamples() {
        INDArray fm = Nd4j.create(new float[] {1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1}, 4, 3);
        DataSet d = new DataSet(series(4, 2, 3, 0), series(4, 2, 3, 500), fm, fm.dup());
        SplitTestAndTrain s = d.splitTestAndTrain(3);
        assertArrayEquals(new long[] {3, 2, 3}, s.getTrain().getFeatures().shape());
        assertEquals(Nd4j.create(new float[] {1, 1, 1}, 1, 3), s.getTest().getFeaturesMaskArray());
        assertEquals(series(4, 2, 3, 0).getRows(3, 4), s.getTest().getFeatures());
        DataSet shuffled = d.copy();
        shuffled.shuffle(7);
        for (int i = 0; i < 4; i++) {
            int orig = Math.round(shuffled.getFeatures().getFloat(i, 0, 0)) / 100;
            assertEquals(d.getFeaturesMaskArray().getRow(orig), shuffled.getFeaturesMaskArray().getRow(i));
            assertEquals(d.getLabelsMaskArray().getRow(orig), shuffled.getLabelsMaskArray().getRow(i));
            assertEquals(500 + 100 * orig, shuffled.getLabels().getFloat(i, 0, 0), 0f);
        }
        assertEquals(2, d.numInputs(), "numInputs of a time series is its size (axis 1)");
    }

    @Test
    void fileFormatJavaAndKryoKeepShapesAndMasksBitExact() throws Exception {
        INDArray f = series(3, 2, 5, -0.25f);
        f.putScalar(new long[] {0, 1, 4}, Float.MIN_VALUE);
        f.putScalar(new long[] {2, 0, 0}, -0f);
        DataSet d = new DataSet(f, series(3, 4, 5, 0.5f), Nd4j.create(new float[] {1, 1, 1, 0, 0, 1, 1, 1, 1, 1,
            1, 0, 0, 0, 0}, 3, 5), Nd4j.create(new float[] {1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 3, 5));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        d.save(out);
        DataSet back = new DataSet();
        back.load(new ByteArrayInputStream(out.toByteArray()));
        for (DataSet c : new DataSet[] {back, SerializationUtil.javaRoundTrip(d),
            (DataSet) SerializationUtil.kryoRoundTrip(d)}) {
            assertEquals(d, c);
            assertArrayEquals(new long[] {3, 2, 5}, c.getFeatures().shape());
            assertArrayEquals(new long[] {3, 5}, c.getLabelsMaskArray().shape());
            float[] a = NDArray.internalData(d.getFeatures());
            float[] b = NDArray.internalData(c.getFeatures());
            for (int i = 0; i < a.length; i++) {
                assertEquals(Float.floatToRawIntBits(a[i]), Float.floatToRawIntBits(b[i]), "bits of value " + i);
            }
        }
    }

    @Test
    void evaluationSkipsMaskedSteps() {
        // 2 examples, 3 classes, 4 steps; labels and predictions per (example, step)
        int[][] label = {{0, 1, 2, 2}, {1, 1, 0, 2}};
        int[][] pred = {{0, 2, 2, 1}, {1, 0, 0, 0}};
        float[] mask = {1, 1, 1, 0, 1, 0, 1, 1};
        INDArray l = Nd4j.zeros(2, 3, 4);
        INDArray p = Nd4j.zeros(2, 3, 4);
        for (int i = 0; i < 2; i++) {
            for (int s = 0; s < 4; s++) {
                l.putScalar(new long[] {i, label[i][s], s}, 1);
                p.putScalar(new long[] {i, pred[i][s], s}, 0.8);
                p.putScalar(new long[] {i, (pred[i][s] + 1) % 3, s}, 0.2);
            }
        }
        Evaluation e = new Evaluation(3);
        e.evalTimeSeries(l, p, Nd4j.create(mask, 2, 4));
        // counted: (0,0) 0->0 ok, (0,1) 1->2, (0,2) 2->2 ok, (1,0) 1->1 ok, (1,2) 0->0 ok, (1,3) 2->0
        assertEquals(6, e.getNumRowCounter());
        assertEquals(4.0 / 6.0, e.accuracy(), 1e-12);
        assertEquals(1, e.getConfusionMatrix().getCount(1, 2));
        assertEquals(1, e.getConfusionMatrix().getCount(2, 0));
        Evaluation viaEval = new Evaluation(3);
        viaEval.eval(l, p, Nd4j.create(mask, 2, 4));
        assertEquals(e, viaEval, "eval on rank-3 arrays is evalTimeSeries");
        Evaluation all = new Evaluation(3);
        all.evalTimeSeries(l, p);
        assertEquals(8, all.getNumRowCounter());
        assertEquals(4.0 / 8.0, all.accuracy(), 1e-12);

        RegressionEvaluation r = new RegressionEvaluation(1);
        INDArray y = Nd4j.create(new float[] {1, 2, 3, 4, 5, 6}, 2, 1, 3);
        INDArray yHat = Nd4j.create(new float[] {1, 2, 5, 4, 9, 6}, 2, 1, 3);
        r.eval(y, yHat, Nd4j.create(new float[] {1, 1, 1, 1, 0, 1}, 2, 3));
        assertEquals(5, r.exampleCount(0));
        assertEquals(4.0 / 5.0, r.meanSquaredError(0), 1e-12, "(5-3)^2 over 5 unmasked steps; 9 vs 5 is masked");

        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> new Evaluation(3).evalTimeSeries(l, p, Nd4j.ones(2, 3)));
        assertTrue(bad.getMessage().contains("[2, 4]") && bad.getMessage().contains("[2, 3]"), bad.getMessage());
        bad = assertThrows(IllegalArgumentException.class,
                () -> new Evaluation(3).evalTimeSeries(Nd4j.zeros(2, 3), Nd4j.zeros(2, 3)));
        assertTrue(bad.getMessage().contains("rank-3"), bad.getMessage());
    }
}
