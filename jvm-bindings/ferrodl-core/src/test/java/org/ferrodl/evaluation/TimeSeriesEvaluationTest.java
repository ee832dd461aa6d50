package org.ferrodl.evaluation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.EvaluationBinary;
import org.ferrodl.evaluation.classification.EvaluationCalibration;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCBinary;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.junit.jupiter.api.Test;

/**
 * Every evaluation takes time series: {@code eval} of {@code [N, C, T]} labels and predictions with an
 * {@code [N, T]} mask counts exactly what {@code eval} of the unmasked (example, step) rows counts
 * (compared through the evaluations' JSON, i.e. every count and stored prediction).
 */
class TimeSeriesEvaluationTest {
    private static final int N = 3;
    private static final int T = 4;
    private static final float[] MASK = {1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1};

    /** [N, C, T] one-hot labels and softmax-like predictions (or independent binary ones). */
    private static INDArray[] series(int c, boolean oneHot, long seed) {
        Random r = new Random(seed);
        float[] y = new float[N * c * T];
        float[] p = new float[N * c * T];
        for (int i = 0; i < N; i++) {
            for (int t = 0; t < T; t++) {
                int hot = r.nextInt(c);
                float sum = 0;
                for (int k = 0; k < c; k++) {
                    int at = i * c * T + k * T + t;
                    y[at] = oneHot ? (k == hot ? 1 : 0) : r.nextInt(2);
                    p[at] = 0.05f + r.nextFloat();
                    sum += p[at];
                }
                for (int k = 0; oneHot && k < c; k++) {
                    p[i * c * T + k * T + t] /= sum;
                }
                for (int k = 0; !oneHot && k < c; k++) {
                    p[i * c * T + k * T + t] = Math.min(p[i * c * T + k * T + t], 0.99f);
                }
            }
        }
        return new INDArray[] {new NDArray(y, N, c, T), new NDArray(p, N, c, T)};
    }

    /** The unmasked (example, step) pairs as rows [M, C]. */
    private static INDArray rows(INDArray a) {
        int c = Math.toIntExact(a.size(1));
        float[] src = NDArray.internalData(a);
        float[] out = new float[N * T * c];
        int m = 0;
        for (int i = 0; i < N; i++) {
            for (int t = 0; t < T; t++) {
                if (MASK[i * T + t] == 0) {
                    continue;
                }
                for (int k = 0; k < c; k++) {
                    out[m * c + k] = src[i * c * T + k * T + t];
                }
                m++;
            }
        }
        return new NDArray(java.util.Arrays.copyOf(out, m * c), m, c);
    }

    private static void check(String what, Supplier<IEvaluation<?>> make, INDArray[] yp) {
        IEvaluation<?> series = make.get();
        series.eval(yp[0], yp[1], new NDArray(MASK, N, T));
        IEvaluation<?> flat = make.get();
        flat.eval(rows(yp[0]), rows(yp[1]));
        assertEquals(flat.toJson(), series.toJson(), what + ": rank 3 + mask == the unmasked rows");
        IEvaluation<?> unmasked = make.get();
        unmasked.eval(yp[0], yp[1]);
        assertNotEquals(flat.toJson(), unmasked.toJson(), what + ": the mask matters");
    }

    @Test
    void everyEvaluationCountsTheUnmaskedStepsOfTimeSeries() {
        for (Object[] c : List.<Object[]>of(
                new Object[] {"Evaluation", (Supplier<IEvaluation<?>>) () -> new Evaluation(3), series(3, true, 1)},
                new Object[] {"EvaluationBinary", (Supplier<IEvaluation<?>>) () -> new EvaluationBinary(),
                    series(2, false, 2)},
                new Object[] {"EvaluationCalibration", (Supplier<IEvaluation<?>>) () -> new EvaluationCalibration(),
                    series(3, true, 3)},
                new Object[] {"ROC exact", (Supplier<IEvaluation<?>>) () -> new ROC(0), series(2, true, 4)},
                new Object[] {"ROC thresholded", (Supplier<IEvaluation<?>>) () -> new ROC(20), series(2, true, 5)},
                new Object[] {"ROCBinary", (Supplier<IEvaluation<?>>) () -> new ROCBinary(0), series(2, false, 6)},
                new Object[] {"ROCMultiClass", (Supplier<IEvaluation<?>>) () -> new ROCMultiClass(0),
                    series(3, true, 7)},
                new Object[] {"RegressionEvaluation", (Supplier<IEvaluation<?>>) () -> new RegressionEvaluation(2),
                    series(2, false, 8)})) {
            @SuppressWarnings("unchecked")
            Supplier<IEvaluation<?>> make = (Supplier<IEvaluation<?>>) c[1];
            check((String) c[0], make, (INDArray[]) c[2]);
        }
    }
}
