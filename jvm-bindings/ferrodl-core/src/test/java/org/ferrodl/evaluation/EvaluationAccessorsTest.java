package org.ferrodl.evaluation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.EvaluationBinary;
import org.ferrodl.evaluation.classification.EvaluationCalibration;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCBinary;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.curves.Histogram;
import org.ferrodl.evaluation.curves.PrecisionRecallCurve;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.junit.jupiter.api.Test;

/** The remaining public accessors of the evaluation family, against hand-computed values. */
class EvaluationAccessorsTest {

    private static INDArray m(int rows, float... v) {
        return Nd4j.create(v, rows, v.length / rows);
    }

    @Test
    void rocPrecisionRecallCurveAndAliases() {
        ROC roc = new ROC();
        roc.add(0.8f, true);
        roc.add(0.4f, false);
        roc.add(0.35f, true);
        roc.add(0.1f, false);
        PrecisionRecallCurve pr = roc.getPrecisionRecallCurve();
        assertArrayEquals(new double[] {1, 1, 0.5, 2.0 / 3, 0.5}, pr.precision(), 1e-12);
        assertArrayEquals(new double[] {0, 0.5, 0.5, 1, 1}, pr.recall(), 1e-12);
        assertArrayEquals(new double[] {Double.POSITIVE_INFINITY, 0.8f, 0.4f, 0.35f, 0.1f}, pr.threshold(), 0);
        assertEquals(roc.calculateAUCPR(), roc.calculateAUPRC(), 0);
        assertTrue(roc.isExact());
        assertThrows(IllegalArgumentException.class, () -> roc.add(Float.NaN, true));
        roc.reset();
        assertEquals(0, roc.getCountActualPositive() + roc.getCountActualNegative());
    }

    @Test
    void rocBinaryAndMultiClassAverages() {
        ROCBinary rb = new ROCBinary().setLabelNames(List.of("first", "second"));
        // output 0: positives {.9}, negatives {.2} -> AUC 1, AUPRC 1; output 1: positive {.3}, negative {.7} -> AUC 0
        rb.eval(m(2, 1, 0, 0, 1), m(2, .9f, .7f, .2f, .3f));
        assertEquals(2, rb.numLabels());
        assertEquals(0.5, rb.calculateAverageAuc(), 1e-12);
        assertEquals(1.0, rb.calculateAUCPR(0), 1e-12);
        // output 1 PR points: (0,1) (0,0 at .7) (1,.5 at .3): trapezoid (1-0)*(0+.5)/2 = .25
        assertEquals(0.25, rb.calculateAUCPR(1), 1e-12);
        assertEquals(0.625, rb.calculateAverageAUCPR(), 1e-12);
        assertTrue(rb.stats().contains("second"), rb.stats());
        assertThrows(IllegalArgumentException.class, () -> rb.getROC(2));

        ROCMultiClass rm = new ROCMultiClass().setLabelNames(List.of("a", "b"));
        rm.eval(m(2, 1, 0, 0, 1), m(2, .9f, .1f, .2f, .8f));
        assertEquals(2, rm.getNumClasses());
        assertEquals(1.0, rm.calculateAverageAUC(), 1e-12);
        assertEquals(1.0, rm.calculateAverageAUCPR(), 1e-12);
        assertEquals(1.0, rm.calculateAUCPR(1), 1e-12);
        assertTrue(rm.stats().contains("average AUC 1.000000"), rm.stats());
        rm.reset();
        assertEquals(0, rm.getNumClasses());
    }

    @Test
    void evaluationBinaryDerivedMetrics() {
        EvaluationBinary e = new EvaluationBinary().setLabelNames(List.of("x"));
        // TP 3, FP 1, TN 4, FN 2
        e.eval(m(10, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1), m(10, .9f, .8f, .7f, .6f, .1f, .2f, .3f, .4f, .2f, .3f));
        assertEquals(10, e.totalCount(0));
        assertEquals(0.7, e.accuracy(0), 1e-12);
        assertEquals(0.75, e.precision(0), 1e-12);
        assertEquals(0.6, e.recall(0), 1e-12);
        assertEquals(0.2, e.falsePositiveRate(0), 1e-12);
        assertEquals(0.4, e.falseNegativeRate(0), 1e-12);
        double b2 = 4;
        assertEquals((1 + b2) * 0.75 * 0.6 / (b2 * 0.75 + 0.6), e.fBeta(2, 0), 1e-12);
        assertEquals((3.0 * 4 - 1 * 2) / Math.sqrt(4.0 * 5 * 5 * 6), e.matthewsCorrelation(0), 1e-12);
        assertEquals(e.accuracy(0), e.averageAccuracy(), 0);
        assertEquals(e.precision(0), e.averagePrecision(), 0);
        assertEquals(e.recall(0), e.averageRecall(), 0);
        assertEquals(e.f1(0), e.averageF1(), 0);
        assertTrue(e.stats().startsWith("Label"), e.stats());
        assertTrue(e.stats().contains("x "), e.stats());
        assertThrows(IllegalArgumentException.class, () -> e.truePositives(1));
    }

    @Test
    void calibrationHistogramOfAllProbabilities() {
        EvaluationCalibration e = new EvaluationCalibration(2, 4, false);
        e.eval(m(2, 1, 0, 0, 1), m(2, .9f, .1f, .3f, .7f));
        assertEquals(2, e.numClasses());
        Histogram h = e.getProbabilityHistogramAllClasses();
        // probabilities .9 .1 .3 .7 -> bins 3, 0, 1, 2 of 4
        assertArrayEquals(new long[] {1, 1, 1, 1}, h.binCounts());
        assertEquals(0.25, h.binLowerBound(1), 1e-12);
        assertEquals(4, h.numBins());
        // excludeEmptyBins=false: both bins of class 0's diagram (.3 in bin 0, .9 in bin 1)
        assertEquals(2, e.getReliabilityDiagram(0).meanPredictedValueX().length);
        assertTrue(e.stats().contains("predictions"), e.stats());
        assertThrows(IllegalStateException.class, () -> new EvaluationCalibration().getReliabilityDiagram(0));
    }

    @Test
    void evaluationLabelMapAndMetricsByName() {
        Evaluation e = new Evaluation(Map.of(0, "no", 1, "yes"));
        assertEquals(List.of("no", "yes"), e.getLabelsList());
        // 4 examples of a binary classifier: TP 1, FP 1, TN 1, FN 1
        e.eval(m(4, 0, 1, 0, 1, 1, 0, 1, 0), m(4, .2f, .8f, .7f, .3f, .6f, .4f, .1f, .9f));
        assertEquals(0.5, e.scoreForMetric(Evaluation.Metric.ACCURACY), 1e-12);
        assertEquals(e.precision(), e.scoreForMetric(Evaluation.Metric.PRECISION), 0);
        assertEquals(e.recall(), e.scoreForMetric(Evaluation.Metric.RECALL), 0);
        assertEquals(e.f1(), e.scoreForMetric(Evaluation.Metric.F1), 0);
        assertEquals(Math.sqrt(e.precision() * e.recall()), e.scoreForMetric(Evaluation.Metric.GMEASURE), 0);
        assertEquals(1, e.getTopN());
        assertEquals(e.accuracy(), e.topNAccuracy(), 0);
        assertThrows(IllegalArgumentException.class, () -> new Evaluation(Map.of(0, "a", 2, "c")));
        assertThrows(IllegalArgumentException.class, () -> new Evaluation(List.of("a", "b"), 0));
    }
}
