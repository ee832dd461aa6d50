package org.ferrodl.evaluation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.EvaluationBinary;
import org.ferrodl.evaluation.classification.EvaluationCalibration;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCBinary;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.curves.Histogram;
import org.ferrodl.evaluation.curves.ReliabilityDiagram;
import org.ferrodl.evaluation.curves.RocCurve;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.junit.jupiter.api.Test;

/** The evaluation family against hand-computed values; merge and JSON/YAML round trips. */
class EvaluationFamilyTest {

    private static INDArray col(float... v) {
        return Nd4j.create(v, v.length, 1);
    }

    @Test
    void rocExactMatchesHandComputedAucAndAuprc() {
        ROC roc = new ROC();
        roc.eval(col(0, 0, 1, 1), col(0.1f, 0.4f, 0.35f, 0.8f));
        // pairs (pos, neg): 0.35>0.1, 0.35<0.4, 0.8>0.1, 0.8>0.4 -> 3/4
        assertEquals(0.75, roc.calculateAUC(), 1e-12);
        // PR points: (0,1) (0.5,1) (0.5,0.5) (1,2/3) (1,0.5); trapezoids over recall: 0.5 + 0.5*(0.5+2/3)/2
        assertEquals(0.5 + 0.5 * (0.5 + 2.0 / 3) / 2, roc.calculateAUCPR(), 1e-12);
        RocCurve c = roc.getRocCurve();
        assertEquals(5, c.numPoints());
        assertArrayEquals(new double[] {0, 0, 0.5, 0.5, 1}, c.fpr(), 1e-12);
        assertArrayEquals(new double[] {0, 0.5, 0.5, 1, 1}, c.tpr(), 1e-12);
        assertEquals(2, roc.getCountActualPositive());
        assertEquals(2, roc.getCountActualNegative());
    }

    @Test
    void rocExactCountsTiesAsOneHalf() {
        ROC roc = new ROC(0);
        // two-column softmax form: column 1 is the positive class
        INDArray labels = Nd4j.create(new float[] {0, 1, 1, 0, 1, 0, 0, 1}, 4, 2);
        INDArray preds = Nd4j.create(new float[] {0.5f, 0.5f, 0.5f, 0.5f, 0.8f, 0.2f, 0.1f, 0.9f}, 4, 2);
        roc.eval(labels, preds);
        // positives {0.5, 0.9}, negatives {0.5, 0.2}: 0.5 + 1 + 1 + 1 over 4
        assertEquals(0.875, roc.calculateAUC(), 1e-12);
    }

    @Test
    void rocThresholdedMatchesHandComputedAuc() {
        ROC roc = new ROC(4);
        roc.eval(col(0, 0, 1, 1), col(0.1f, 0.4f, 0.35f, 0.8f));
        // thresholds 1, .75, .5, .25, 0 -> (fpr,tpr) (0,0) (0,.5) (0,.5) (.5,1) (1,1), after (0,0)
        assertEquals(0.5 * 1.5 / 2 + 0.5, roc.calculateAUC(), 1e-12);
        RocCurve c = roc.getRocCurve();
        assertArrayEquals(new double[] {Double.POSITIVE_INFINITY, 1, 0.75, 0.5, 0.25, 0}, c.threshold(), 0);
        assertArrayEquals(new double[] {0, 0, 0, 0, 0.5, 1}, c.fpr(), 1e-12);
        assertArrayEquals(new double[] {0, 0, 0.5, 0.5, 1, 1}, c.tpr(), 1e-12);
    }

    @Test
    void rocIsUndefinedWithOneClassAndRefusesBadInput() {
        ROC roc = new ROC();
        roc.eval(col(1, 1), col(0.3f, 0.6f));
        assertTrue(Double.isNaN(roc.calculateAUC()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> roc.eval(col(0.5f), col(0.3f)));
        assertTrue(e.getMessage().contains("0/1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> roc.eval(Nd4j.zeros(2, 3), Nd4j.zeros(2, 3)));
        assertThrows(IllegalArgumentException.class, () -> roc.merge(new ROC(10)));
        assertThrows(IllegalArgumentException.class, () -> new ROC(-1));
    }

    /** Random data evaluated whole, and in 5 parts merged in reverse: identical results. */
    @Test
    @SuppressWarnings({"rawtypes", "unchecked"})
    void everyEvaluationMergesToTheWholeResult() {
        Random r = new Random(3);
        int n = 200;
        int k = 4;
        float[] oneHot = new float[n * k];
        float[] probs = new float[n * k];
        float[] bin = new float[n * k];
        for (int i = 0; i < n; i++) {
            oneHot[i * k + r.nextInt(k)] = 1;
            float s = 0;
            for (int c = 0; c < k; c++) {
                probs[i * k + c] = Math.round(r.nextFloat() * 20) / 20f + 0.01f;
                s += probs[i * k + c];
                bin[i * k + c] = r.nextBoolean() ? 1 : 0;
            }
            for (int c = 0; c < k; c++) {
                probs[i * k + c] /= s;
            }
        }
        INDArray labels = Nd4j.create(oneHot, n, k);
        INDArray preds = Nd4j.create(probs, n, k);
        INDArray binLabels = Nd4j.create(bin, n, k);
        List<java.util.function.Supplier<IEvaluation<?>>> makers = List.of(
                () -> new Evaluation(List.of("a", "b", "c", "d"), 2), ROCMultiClass::new, () -> new ROCMultiClass(10),
                ROCBinary::new, () -> new ROCBinary(7), EvaluationBinary::new, EvaluationCalibration::new,
                () -> new RegressionEvaluation(k));
        for (var maker : makers) {
            IEvaluation whole = maker.get();
            boolean binary = whole instanceof ROCBinary || whole instanceof EvaluationBinary;
            INDArray l = binary ? binLabels : labels;
            whole.eval(l, preds);
            IEvaluation merged = maker.get();
            for (int part = 4; part >= 0; part--) {
                IEvaluation p = maker.get();
                p.eval(l.getRows(part * 40, part * 40 + 40), preds.getRows(part * 40, part * 40 + 40));
                merged.merge(p);
            }
            if (whole instanceof RegressionEvaluation w) {
                assertEquals(w.averageMeanSquaredError(), ((RegressionEvaluation) merged).averageMeanSquaredError(),
                        1e-9);
            } else {
                assertEquals(whole, merged, whole.getClass().getSimpleName());
            }
            // JSON and YAML round trips keep configuration and counts
            IEvaluation<?> fromJson = IEvaluation.fromJson(whole.toJson(), IEvaluation.class);
            assertEquals(whole.getClass(), fromJson.getClass());
            assertEquals(whole.toJson(), fromJson.toJson());
            assertEquals(whole.stats(), fromJson.stats());
            IEvaluation<?> fromYaml = IEvaluation.fromYaml(whole.toYaml(), IEvaluation.class);
            assertEquals(whole.stats(), fromYaml.stats());
        }
    }

    @Test
    void jsonOfAnotherClassOrWithUnknownFieldsIsRefused() {
        String json = new ROC().toJson();
        assertThrows(IllegalArgumentException.class, () -> IEvaluation.fromJson(json, Evaluation.class));
        assertThrows(IllegalArgumentException.class, () -> IEvaluation.fromJson(
                json.replace("\"thresholdSteps\"", "\"thresholdStepz\""), ROC.class));
        ROC back = IEvaluation.fromJson(new ROC(5).toJson(), ROC.class);
        assertEquals(5, back.getThresholdSteps());
    }

    @Test
    void rocMultiClassIsOneVsAll() {
        ROCMultiClass roc = new ROCMultiClass();
        INDArray labels = Nd4j.create(new float[] {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0}, 4, 3);
        INDArray preds = Nd4j.create(new float[] {.7f, .2f, .1f, .3f, .4f, .3f, .2f, .5f, .3f, .4f, .4f, .2f}, 4, 3);
        roc.eval(labels, preds);
        // class 0: positives {.7,.4}, negatives {.3,.2} -> 1.0
        assertEquals(1.0, roc.calculateAUC(0), 1e-12);
        // class 1: positive {.4}, negatives {.2,.5,.4} -> (1 + 0 + .5)/3
        assertEquals(0.5, roc.calculateAUC(1), 1e-12);
        // class 2: positive {.3}, negatives {.1,.3,.2} -> (1 + .5 + 1)/3
        assertEquals(2.5 / 3, roc.calculateAUC(2), 1e-12);
        assertEquals((1.0 + 0.5 + 2.5 / 3) / 3, roc.calculateAverageAUC(), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> roc.eval(col(1), col(0.5f)));
    }

    @Test
    void rocBinaryHonoursPerOutputMask() {
        ROCBinary roc = new ROCBinary();
        INDArray labels = Nd4j.create(new float[] {1, 0, 0, 1, 1, 1, 0, 0}, 4, 2);
        INDArray preds = Nd4j.create(new float[] {.9f, .1f, .2f, .8f, .3f, .9f, .4f, .2f}, 4, 2);
        INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 0, 1, 1}, 4, 2);
        roc.eval(labels, preds, mask);
        // output 0: positives {.9,.3} negatives {.2,.4} -> (1+1+1+0)/4
        assertEquals(0.75, roc.calculateAUC(0), 1e-12);
        // output 1 (row 2 masked): positives {.8}, negatives {.1,.2} -> 1
        assertEquals(1.0, roc.calculateAUC(1), 1e-12);
        assertEquals(3, roc.getROC(1).getCountActualPositive() + roc.getROC(1).getCountActualNegative());
    }

    @Test
    void evaluationBinaryCountsPerOutput() {
        EvaluationBinary e = new EvaluationBinary();
        INDArray labels = Nd4j.create(new float[] {1, 0, 1, 1, 0, 0, 0, 1}, 4, 2);
        INDArray preds = Nd4j.create(new float[] {.6f, .4f, .5f, .2f, .7f, .1f, .3f, .9f}, 4, 2);
        e.eval(labels, preds);
        // output 0: (1,.6)TP (1,.5)TP (0,.7)FP (0,.3)TN
        assertEquals(2, e.truePositives(0));
        assertEquals(1, e.falsePositives(0));
        assertEquals(1, e.trueNegatives(0));
        assertEquals(0, e.falseNegatives(0));
        assertEquals(0.75, e.accuracy(0), 1e-12);
        assertEquals(2.0 / 3, e.precision(0), 1e-12);
        assertEquals(1.0, e.recall(0), 1e-12);
        assertEquals(0.8, e.f1(0), 1e-12);
        // output 1: (0,.4)TN (1,.2)FN (0,.1)TN (1,.9)TP
        assertEquals(0.5, e.recall(1), 1e-12);
        assertEquals(1.0, e.precision(1), 1e-12);
        assertEquals(0.25, e.falseNegativeRate(1) / 2, 1e-12);
        assertEquals(0.25, e.falseAlarmRate(0), 1e-12); // mean of FPR .5 and FNR 0
        EvaluationBinary custom = new EvaluationBinary(Nd4j.create(new float[] {0.65f, 0.1f}, 1, 2));
        custom.eval(labels, preds);
        // output 0 at 0.65: only 0.7 (label 0) is positive; output 1 at 0.1: every value is positive
        assertEquals(0, custom.truePositives(0));
        assertEquals(1, custom.falsePositives(0));
        assertEquals(2, custom.truePositives(1));
        assertEquals(2, custom.falsePositives(1));
        assertThrows(IllegalArgumentException.class, () -> custom.eval(Nd4j.zeros(2, 3), Nd4j.zeros(2, 3)));
    }

    @Test
    void calibrationBinsReliabilityAndHistograms() {
        EvaluationCalibration e = new EvaluationCalibration(4, 5);
        INDArray labels = Nd4j.create(new float[] {1, 0, 1, 0, 0, 1, 0, 1}, 4, 2);
        INDArray preds = Nd4j.create(new float[] {.9f, .1f, .65f, .35f, .8f, .2f, .3f, .7f}, 4, 2);
        e.eval(labels, preds);
        assertArrayEquals(new long[] {2, 2}, e.getLabelCountsEachClass());
        assertArrayEquals(new long[] {3, 1}, e.getPredictionCountsEachClass());
        ReliabilityDiagram d = e.getReliabilityDiagram(0);
        // class 0 probabilities .9 .65 .8 .3 -> bins 3,2,3,1: bin1 {.3 neg}, bin2 {.65 pos}, bin3 {.9 pos,.8 neg}
        assertArrayEquals(new double[] {0.3, 0.65, 0.85}, d.meanPredictedValueX(), 1e-6);
        assertArrayEquals(new double[] {0, 1, 0.5}, d.fractionPositivesY(), 1e-12);
        Histogram h = e.getProbabilityHistogram(1);
        // class-1 examples (rows 2,3) have p_1 = .2 and .7 -> bins 1 and 3 of 5
        assertArrayEquals(new long[] {0, 1, 0, 1, 0}, h.binCounts());
        Histogram res = e.getResidualPlot(0);
        // class-0 examples (rows 0,1): |1-.9| = .1 (bin 0), |1-.65| = .35 (bin 1)
        assertArrayEquals(new long[] {1, 1, 0, 0, 0}, res.binCounts());
        assertEquals(8, java.util.Arrays.stream(e.getResidualPlotAllClasses().binCounts()).sum());
        assertThrows(IllegalArgumentException.class, () -> e.eval(Nd4j.create(new float[] {1, 1}, 1, 2),
                Nd4j.create(new float[] {.5f, .5f}, 1, 2)));
    }

    @Test
    void evaluationHasLabelNamesAndTopN() {
        Evaluation e = new Evaluation(List.of("cat", "dog", "bird"), 2);
        INDArray labels = Nd4j.create(new float[] {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1}, 4, 3);
        INDArray preds = Nd4j.create(new float[] {.6f, .3f, .1f, .5f, .3f, .2f, .5f, .4f, .1f, .2f, .3f, .5f}, 4, 3);
        e.eval(labels, preds);
        // row0 correct; row1 dog is 2nd -> top2; row2 bird is 3rd -> not; row3 correct
        assertEquals(0.5, e.accuracy(), 1e-12);
        assertEquals(0.75, e.topNAccuracy(), 1e-12);
        assertEquals(3, e.getTopNCorrectCount());
        assertEquals(4, e.getTopNTotalCount());
        assertEquals("dog", e.getClassLabel(1));
        assertTrue(e.stats().contains("dog"), e.stats());
        assertTrue(e.stats().contains("Top 2 Accuracy"), e.stats());
        Evaluation other = new Evaluation(List.of("a", "b", "c"), 2);
        assertThrows(IllegalArgumentException.class, () -> e.merge(other));
        assertThrows(IllegalArgumentException.class, () -> e.merge(new Evaluation(3, 3)));
        e.reset();
        assertEquals(0, e.getNumRowCounter());
        assertEquals(3, e.getNumClasses());
        assertNotEquals(0, new Evaluation(3).toJson().length());
    }
}
