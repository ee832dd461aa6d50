package org.ferrodl.evaluation;

import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * Checks shared by the evaluation classes: rank-2 labels and predictions of one shape, and the
 * mask forms each class accepts. Public only so the evaluation subpackages can use it.
 */
public final class EvalInputs {
    private EvalInputs() {
    }

    /** Shape {@code [rows, cols]} of labels and predictions, after checking they match. */
    public static int[] rowsCols(INDArray labels, INDArray predictions, String who) {
        Objects.requireNonNull(labels, "labels");
        Objects.requireNonNull(predictions, "predictions");
        if (labels.rank() != 2 || predictions.rank() != 2) {
            throw new IllegalArgumentException(who + " needs rank-2 labels and predictions, got shapes "
                    + Arrays.toString(labels.shape()) + " and " + Arrays.toString(predictions.shape()));
        }
        if (!Arrays.equals(labels.shape(), predictions.shape())) {
            throw new IllegalArgumentException(who + ": labels and predictions shapes differ: "
                    + Arrays.toString(labels.shape()) + " vs " + Arrays.toString(predictions.shape()));
        }
        return new int[] {Math.toIntExact(labels.size(0)), Math.toIntExact(labels.size(1))};
    }

    /**
     * The mask as a per-entry array of {@code rows × cols} values (a per-example mask is expanded),
     * or null without a mask.
     *
     * @param allowPerOutput whether an {@code N × C} mask is accepted
     */
    public static float[] entryMask(INDArray mask, int rows, int cols, boolean allowPerOutput, String who) {
        if (mask == null) {
            return null;
        }
        float[] m = NDArray.internalData(mask);
        boolean perExample = mask.length() == rows
                && (mask.rank() == 1 || (mask.rank() == 2 && mask.size(1) == 1));
        if (perExample) {
            float[] out = new float[rows * cols];
            for (int r = 0; r < rows; r++) {
                Arrays.fill(out, r * cols, (r + 1) * cols, m[r]);
            }
            return out;
        }
        if (allowPerOutput && mask.rank() == 2 && mask.size(0) == rows && mask.size(1) == cols) {
            return m.clone();
        }
        throw new IllegalArgumentException(who + ": the mask must be per example ([" + rows + "] or [" + rows
                + ", 1])" + (allowPerOutput ? " or per output ([" + rows + ", " + cols + "])" : "")
                + ", got " + Arrays.toString(mask.shape()));
    }

    /** A 0/1 label value as a boolean; anything else is refused. */
    public static boolean binaryLabel(float v, int row, int col, String who) {
        if (v == 1f) {
            return true;
        }
        if (v == 0f) {
            return false;
        }
        throw new IllegalArgumentException(who + " needs 0/1 labels, got " + v + " at row " + row + ", column " + col);
    }

    /**
     * The unmasked time steps of time-series labels and predictions ({@code [N, C, T]}, NCW) as rows
     * {@code [K, C]}, one per (example, step) whose mask is not 0, in example-then-step order (the
     * reference's reshape of time series for evaluation).
     *
     * @param labels {@code [N, C, T]} labels
     * @param predictions {@code [N, C, T]} network output
     * @param labelsMask null (every step counts) or a per-step mask {@code [N, T]}
     * @param who the evaluation's name, for messages
     * @return {labels rows, prediction rows}
     * @throws IllegalArgumentException for arrays that are not rank 3 of one shape, or a mask not [N, T]
     */
    public static INDArray[] timeSeriesRows(INDArray labels, INDArray predictions, INDArray labelsMask, String who) {
        Objects.requireNonNull(labels, "labels");
        Objects.requireNonNull(predictions, "predictions");
        if (labels.rank() != 3 || predictions.rank() != 3) {
            throw new IllegalArgumentException(who + ": time series evaluation needs rank-3 labels and predictions "
                    + "[examples, size, timeSteps], got shapes " + Arrays.toString(labels.shape()) + " and "
                    + Arrays.toString(predictions.shape()));
        }
        if (!Arrays.equals(labels.shape(), predictions.shape())) {
            throw new IllegalArgumentException(who + ": labels and predictions shapes differ: "
                    + Arrays.toString(labels.shape()) + " vs " + Arrays.toString(predictions.shape()));
        }
        int n = Math.toIntExact(labels.size(0));
        int c = Math.toIntExact(labels.size(1));
        int t = Math.toIntExact(labels.size(2));
        float[] m = null;
        if (labelsMask != null) {
            if (labelsMask.rank() != 2 || labelsMask.size(0) != n || labelsMask.size(1) != t) {
                throw new IllegalArgumentException(who + ": the labels mask of time series " + Arrays.toString(labels.shape())
                        + " must be [examples, timeSteps] = [" + n + ", " + t + "], got "
                        + Arrays.toString(labelsMask.shape()));
            }
            m = NDArray.internalData(labelsMask);
        }
        int kept = 0;
        for (int i = 0; i < n * t; i++) {
            if (m == null || m[i] != 0f) {
                kept++;
            }
        }
        float[] l = NDArray.internalData(labels);
        float[] p = NDArray.internalData(predictions);
        float[] lr = new float[kept * c];
        float[] pr = new float[kept * c];
        int row = 0;
        for (int e = 0; e < n; e++) {
            for (int s = 0; s < t; s++) {
                if (m != null && m[e * t + s] == 0f) {
                    continue;
                }
                for (int j = 0; j < c; j++) {
                    int src = (e * c + j) * t + s;
                    lr[row * c + j] = l[src];
                    pr[row * c + j] = p[src];
                }
                row++;
            }
        }
        return new INDArray[] {new NDArray(lr, kept, c), new NDArray(pr, kept, c)};
    }
}
