package org.ferrodl.evaluation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.evaluation.classification.ConfusionMatrix;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

class EvaluationTest {

    private static INDArray oneHot(int classes, int... cls) {
        float[][] m = new float[cls.length][classes];
        for (int i = 0; i < cls.length; i++) {
            m[i][cls[i]] = 1;
        }
        return Nd4j.create(m);
    }

    /**
     * actual    0 0 0 1 1 2 2 2 2 3
     * predicted 0 0 1 1 2 2 2 0 2 3     (class 4 never appears)
     * TP: 2,1,3,1,0  FP: 1,1,1,0,0  FN: 1,1,1,0,0
     */
    private static Evaluation fiveClasses() {
        Evaluation e = new Evaluation(5);
        INDArray labels = oneHot(5, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3);
        // predictions as probabilities, not one-hot, to exercise argmax
        INDArray p = oneHot(5, 0, 0, 1, 1, 2, 2, 2, 0, 2, 3).mul(0.6).add(Nd4j.ones(10, 5).mul(0.08));
        e.eval(labels, p);
        return e;
    }

    @Test
    void perClassAndMacroMetricsMatchHandComputedValues() {
        Evaluation e = fiveClasses();
        assertEquals(10, e.getNumRowCounter());
        assertEquals(0.7, e.accuracy(), 1e-12);
        assertEquals(2.0 / 3, e.precision(0), 1e-12);
        assertEquals(0.5, e.precision(1), 1e-12);
        assertEquals(0.75, e.precision(2), 1e-12);
        assertEquals(1.0, e.precision(3), 1e-12);
        assertEquals(0.0, e.precision(4), 1e-12);
        assertEquals(2.0 / 3, e.recall(0), 1e-12);
        assertEquals(0.5, e.recall(1), 1e-12);
        assertEquals(0.75, e.recall(2), 1e-12);
        assertEquals(1.0, e.recall(3), 1e-12);
        assertEquals(2.0 / 3, e.f1(0), 1e-12);
        // class 4 is in neither labels nor predictions: excluded from every macro average
        double macro = (2.0 / 3 + 0.5 + 0.75 + 1.0) / 4;
        assertEquals(macro, e.precision(), 1e-12);
        assertEquals(macro, e.recall(), 1e-12);
        assertEquals(macro, e.f1(), 1e-12);
        assertEquals(0.7, e.precision(EvaluationAveraging.Micro), 1e-12);
        ConfusionMatrix cm = e.getConfusionMatrix();
        assertEquals(2, cm.getCount(0, 0));
        assertEquals(1, cm.getCount(0, 1));
        assertEquals(1, cm.getCount(2, 0));
        assertEquals(0, cm.getCount(2, 1));
        assertEquals(4, cm.getActualTotal(2));
        assertEquals(4, cm.getPredictedTotal(2));
        assertEquals(1, e.falsePositives(0));
        assertEquals(6, e.trueNegatives(0));
    }

    @Test
    void classOnlyInLabelsCountsInRecallButNotPrecision() {
        Evaluation e = new Evaluation(3);
        // actual 0 0 1 2 ; predicted 0 0 0 0
        e.eval(oneHot(3, 0, 0, 1, 2), oneHot(3, 0, 0, 0, 0));
        assertEquals(0.5, e.precision(), 1e-12); // only class 0 was predicted: 2/4
        assertEquals(1.0 / 3, e.recall(), 1e-12); // (1 + 0 + 0) / 3
        // F1 is defined only for class 0 (classes 1 and 2 were never predicted: precision undefined)
        assertEquals(2.0 / 3, e.f1(), 1e-12);
        assertEquals(0.0, e.f1(1), 1e-12);
    }

    @Test
    void binaryMetricsReportThePositiveClass() {
        Evaluation e = new Evaluation();
        INDArray labels = Nd4j.create(new float[] {1, 1, 0, 0, 1}, 5, 1);
        INDArray predictions = Nd4j.create(new float[] {0.9f, 0.4f, 0.6f, 0.1f, 0.5f}, 5, 1);
        e.eval(labels, predictions);
        // predicted 1 0 1 0 1 ; TP(1) = 2, FP(1) = 1, FN(1) = 1
        assertEquals(2, e.getNumClasses());
        assertEquals(0.6, e.accuracy(), 1e-12);
        assertEquals(2.0 / 3, e.precision(), 1e-12);
        assertEquals(2.0 / 3, e.recall(), 1e-12);
        assertEquals(2.0 / 3, e.f1(), 1e-12);
        assertEquals(0.5, e.precision(0), 1e-12);
    }

    @Test
    void labelsMaskSkipsExamples() {
        Evaluation e = new Evaluation(2);
        INDArray labels = oneHot(2, 0, 1, 1);
        INDArray predictions = oneHot(2, 0, 0, 1);
        e.eval(labels, predictions, Nd4j.create(new float[] {1, 0, 1}, 3, 1));
        assertEquals(2, e.getNumRowCounter());
        assertEquals(1.0, e.accuracy(), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> e.eval(labels, predictions, Nd4j.ones(3, 2)));
        assertThrows(IllegalArgumentException.class, () -> e.eval(oneHot(3, 0), oneHot(3, 0)));
    }

    @Test
    void mergeEqualsEvaluatingEverythingAtOnce() throws Exception {
        Evaluation all = fiveClasses();
        INDArray labels = oneHot(5, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3);
        INDArray p = oneHot(5, 0, 0, 1, 1, 2, 2, 2, 0, 2, 3);
        Evaluation a = new Evaluation();
        a.eval(labels.getRows(0, 4), p.getRows(0, 4));
        Evaluation b = new Evaluation(5);
        b.eval(labels.getRows(4, 10), p.getRows(4, 10));
        Evaluation merged = new Evaluation();
        merged.merge(a);
        merged.merge(new Evaluation());
        merged.merge(SerializationUtil.javaRoundTrip(b));
        assertEquals(all, merged);
        assertEquals(all.f1(), merged.f1(), 1e-12);
        assertEquals(all, SerializationUtil.kryoRoundTrip(all));
        assertThrows(IllegalArgumentException.class, () -> merged.merge(new Evaluation(3) {
            {
                eval(oneHot(3, 1), oneHot(3, 1));
            }
        }));
    }

    @Test
    void emptyEvaluationAndStats() {
        Evaluation e = new Evaluation(3);
        assertEquals(0.0, e.accuracy());
        assertEquals(0.0, e.f1());
        String s = fiveClasses().stats();
        assertTrue(s.contains("Accuracy:        0.7000"), s);
        assertTrue(s.contains("# of examples:   10"), s);
        assertTrue(s.contains("Precision:       0.7292"), s);
    }
}
