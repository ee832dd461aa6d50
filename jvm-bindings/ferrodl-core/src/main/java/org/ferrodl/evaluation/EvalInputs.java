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
}
