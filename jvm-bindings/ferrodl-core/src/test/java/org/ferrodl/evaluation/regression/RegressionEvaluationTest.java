package org.ferrodl.evaluation.regression;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.ferrodl.evaluation.regression.RegressionEvaluation.Metric;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** Pure Java. */
class RegressionEvaluationTest {
    private static final double EPS = 1e-12;

    // column 0: y = 1,2,3,4   p = 1.5,2,2,5    column 1: y = 0,0,2,2   p = 1,-1,2,4
    private static final INDArray LABELS = Nd4j.create(new float[] {1, 0, 2, 0, 3, 2, 4, 2}, 4, 2);
    private static final INDArray PREDICTIONS = Nd4j.create(new float[] {1.5f, 1, 2, -1, 2, 2, 5, 4}, 4, 2);

    /**
     * Column 0: errors -0.5, 0, 1, -1 → SSE 2.25, SAE 2.5; ȳ = 2.5, Σ(y-ȳ)² = 5; p̄ = 2.625,
     * Σ(p-p̄)² = 7.6875, Σ(y-ȳ)(p-p̄) = 5.25.
     */
    private static void assertColumn0(RegressionEvaluation e) {
        assertEquals(4, e.exampleCount(0));
        assertEquals(2.25 / 4, e.meanSquaredError(0), EPS);
        assertEquals(2.5 / 4, e.meanAbsoluteError(0), EPS);
        assertEquals(0.75, e.rootMeanSquaredError(0), EPS);
        assertEquals(2.25 / 5, e.relativeSquaredError(0), EPS);
        assertEquals(1 - 2.25 / 5, e.rSquared(0), EPS);
        assertEquals(5.25 / Math.sqrt(5 * 7.6875), e.pearsonCorrelation(0), EPS);
        assertEquals(e.pearsonCorrelation(0), e.correlationR2(0), 0.0);
    }

    /**
     * Column 1: errors -1, 1, 0, -2 → SSE 6, SAE 4; ȳ = 1, Σ(y-ȳ)² = 4; p̄ = 1.5, Σ(p-p̄)² = 13,
     * Σ(y-ȳ)(p-p̄) = 6.
     */
    private static void assertColumn1(RegressionEvaluation e) {
        assertEquals(4, e.exampleCount(1));
        assertEquals(1.5, e.meanSquaredError(1), EPS);
        assertEquals(1.0, e.meanAbsoluteError(1), EPS);
        assertEquals(Math.sqrt(1.5), e.rootMeanSquaredError(1), EPS);
        assertEquals(1.5, e.relativeSquaredError(1), EPS);
        assertEquals(-0.5, e.rSquared(1), EPS);
        assertEquals(6 / Math.sqrt(4 * 13), e.pearsonCorrelation(1), EPS);
    }

    @Test
    void perColumnMetricsMatchHandComputedValues() {
        RegressionEvaluation e = new RegressionEvaluation();
        e.eval(LABELS, PREDICTIONS);
        assertEquals(2, e.numColumns());
        assertColumn0(e);
        assertColumn1(e);
    }

    @Test
    void averagesAreMeansOverColumns() {
        RegressionEvaluation e = new RegressionEvaluation(2);
        e.eval(LABELS, PREDICTIONS);
        assertEquals((0.5625 + 1.5) / 2, e.averageMeanSquaredError(), EPS);
        assertEquals((0.625 + 1.0) / 2, e.averageMeanAbsoluteError(), EPS);
        assertEquals((0.75 + Math.sqrt(1.5)) / 2, e.averagerootMeanSquaredError(), EPS);
        assertEquals(e.averagerootMeanSquaredError(), e.averageRootMeanSquaredError(), 0.0);
        assertEquals((0.45 + 1.5) / 2, e.averagerelativeSquaredError(), EPS);
        assertEquals(e.averagerelativeSquaredError(), e.averageRelativeSquaredError(), 0.0);
        assertEquals((0.55 - 0.5) / 2, e.averageRSquared(), EPS);
        double pc = (5.25 / Math.sqrt(5 * 7.6875) + 6 / Math.sqrt(52)) / 2;
        assertEquals(pc, e.averagePearsonCorrelation(), EPS);
        assertEquals(pc, e.averagecorrelationR2(), EPS);
        assertEquals(e.averageMeanSquaredError(), e.scoreForMetric(Metric.MSE), 0.0);
        assertEquals(e.averageMeanAbsoluteError(), e.scoreForMetric(Metric.MAE), 0.0);
        assertEquals(e.averagerootMeanSquaredError(), e.scoreForMetric(Metric.RMSE), 0.0);
        assertEquals(e.averagerelativeSquaredError(), e.scoreForMetric(Metric.RSE), 0.0);
        assertEquals(e.averagePearsonCorrelation(), e.scoreForMetric(Metric.PC), 0.0);
        assertEquals(e.averageRSquared(), e.scoreForMetric(Metric.R2), 0.0);
        assertTrue(Metric.MSE.minimize());
        assertFalse(Metric.R2.minimize());
    }

    @Test
    void evaluatingInPartsAndMergingGivesTheSameMetrics() {
        RegressionEvaluation a = new RegressionEvaluation();
        a.eval(LABELS.getRows(0, 1), PREDICTIONS.getRows(0, 1));
        RegressionEvaluation b = new RegressionEvaluation();
        b.eval(LABELS.getRows(1, 4), PREDICTIONS.getRows(1, 4));
        RegressionEvaluation empty = new RegressionEvaluation();
        empty.merge(a);
        empty.merge(b);
        empty.merge(new RegressionEvaluation());
        assertColumn0(empty);
        assertColumn1(empty);

        // several eval calls on one object: the same again
        RegressionEvaluation seq = new RegressionEvaluation();
        for (int r = 0; r < 4; r++) {
            seq.eval(LABELS.getRows(r, r + 1), PREDICTIONS.getRows(r, r + 1));
        }
        assertColumn0(seq);
        assertColumn1(seq);
        assertThrows(IllegalArgumentException.class, () -> seq.merge(new RegressionEvaluation(3)));
    }

    @Test
    void perExampleAndPerOutputMasks() {
        RegressionEvaluation e = new RegressionEvaluation();
        e.eval(LABELS, PREDICTIONS, Nd4j.create(new float[] {1, 1, 1, 0}, 4, 1));
        // column 0 without the last example: y = 1,2,3, p = 1.5,2,2 → errors -0.5,0,1
        assertEquals(3, e.exampleCount(0));
        assertEquals(1.25 / 3, e.meanSquaredError(0), EPS);
        assertEquals(1.25 / 2, e.relativeSquaredError(0), EPS); // ȳ = 2, Σ(y-ȳ)² = 2

        RegressionEvaluation rank1 = new RegressionEvaluation();
        rank1.eval(LABELS, PREDICTIONS, Nd4j.create(new float[] {1, 1, 1, 0}, 4));
        assertEquals(e.meanSquaredError(1), rank1.meanSquaredError(1), 0.0);

        RegressionEvaluation perOutput = new RegressionEvaluation();
        perOutput.eval(LABELS, PREDICTIONS, Nd4j.create(new float[] {1, 0, 1, 1, 1, 1, 1, 1}, 4, 2));
        assertColumn0(perOutput);
        // column 1 without its first value: y = 0,2,2, p = -1,2,4 → errors 1,0,-2
        assertEquals(3, perOutput.exampleCount(1));
        assertEquals(5.0 / 3, perOutput.meanSquaredError(1), EPS);

        assertThrows(IllegalArgumentException.class,
                () -> new RegressionEvaluation().eval(LABELS, PREDICTIONS, Nd4j.ones(4, 3)));
    }

    @Test
    void undefinedValuesAndShapeErrors() {
        RegressionEvaluation e = new RegressionEvaluation(1);
        assertTrue(Double.isNaN(e.meanSquaredError(0)), "no data: NaN");
        assertTrue(Double.isNaN(e.averageRSquared()));
        assertTrue(Double.isNaN(new RegressionEvaluation().averageMeanSquaredError()));
        assertEquals(-1, new RegressionEvaluation().numColumns());
        assertThrows(IllegalArgumentException.class, () -> e.meanSquaredError(1));
        assertThrows(IllegalArgumentException.class, () -> e.eval(LABELS, PREDICTIONS));
        assertThrows(IllegalArgumentException.class,
                () -> new RegressionEvaluation().eval(LABELS, PREDICTIONS.getRows(0, 2)));
        assertThrows(IllegalArgumentException.class, () -> new RegressionEvaluation(0));
        assertThrows(IllegalArgumentException.class, () -> new RegressionEvaluation(List.of()));
    }

    @Test
    void statsNamesColumnsAndPrintsEveryMetric() {
        RegressionEvaluation e = new RegressionEvaluation("age", "weight");
        assertEquals(List.of("age", "weight"), e.getColumnNames());
        e.eval(LABELS, PREDICTIONS);
        String s = e.stats();
        for (String h : new String[] {"Column", "MSE", "MAE", "RMSE", "RSE", "PC", "R^2", "age", "weight"}) {
            assertTrue(s.contains(h), h + " in\n" + s);
        }
        assertTrue(s.contains("5.6250e-01"), s); // MSE of column 0, 5 significant digits
        assertTrue(s.contains("-5.0000e-01"), s); // R² of column 1
        assertEquals(3, s.split("\n").length);
        assertTrue(new RegressionEvaluation(2, 3).stats().contains("no data"));
        RegressionEvaluation p3 = new RegressionEvaluation(2, 3);
        p3.eval(LABELS, PREDICTIONS);
        assertTrue(p3.stats().contains("6.25e-01"), p3.stats()); // MAE of column 0
        assertTrue(p3.stats().contains("col_1"), p3.stats());
    }

    @Test
    void resetAndSerialization() throws Exception {
        RegressionEvaluation e = new RegressionEvaluation();
        e.eval(LABELS, PREDICTIONS);
        RegressionEvaluation copy = SerializationUtil.javaRoundTrip(e);
        assertColumn0(copy);
        assertColumn1(copy);
        e.reset();
        assertEquals(2, e.numColumns());
        assertEquals(0, e.exampleCount(0));
        e.eval(LABELS, PREDICTIONS);
        assertColumn0(e);
    }
}
