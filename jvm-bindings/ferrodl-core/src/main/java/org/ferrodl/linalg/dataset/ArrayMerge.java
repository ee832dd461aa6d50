package org.ferrodl.linalg.dataset;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * Merging one array slot (features or labels, with its mask) of several DataSets along the example
 * axis, as the reference does: arrays are stacked; where some parts have a mask and others not, the
 * missing masks are all ones; time series ({@code [n, size, timeSteps]}) of different lengths are
 * padded with zeros at the end to the longest, and the mask ({@code [N, maxSteps]}) then marks each
 * example's real steps (1) and the padding (0), keeping the parts' own masks on their real steps.
 */
final class ArrayMerge {
    private ArrayMerge() {
    }

    /**
     * @param arrays one array per part (none null), examples along axis 0
     * @param masks one mask per part (entries may be null), or null for none
     * @param what the slot's name, for messages
     * @return {merged array, merged mask or null}
     * @throws DL4JInvalidInputException when the shapes cannot be merged
     */
    static INDArray[] merge(List<INDArray> arrays, List<INDArray> masks, String what) {
        if (isRaggedTimeSeries(arrays)) {
            return mergeTimeSeries(arrays, masks, what);
        }
        INDArray merged;
        try {
            merged = Nd4j.vstack(arrays);
        } catch (IllegalArgumentException e) {
            throw new DL4JInvalidInputException("cannot merge " + what + ": " + e.getMessage(), e);
        }
        return new INDArray[] {merged, mergeMasks(arrays, masks, what)};
    }

    private static boolean isRaggedTimeSeries(List<INDArray> arrays) {
        long steps = -1;
        for (INDArray a : arrays) {
            if (a.rank() != 3) {
                return false;
            }
            if (steps >= 0 && a.size(2) != steps) {
                return true;
            }
            steps = a.size(2);
        }
        return false;
    }

    private static INDArray mergeMasks(List<INDArray> arrays, List<INDArray> masks, String what) {
        long[] template = null;
        for (int k = 0; masks != null && k < masks.size() && template == null; k++) {
            if (masks.get(k) != null) {
                template = masks.get(k).shape();
            }
        }
        if (template == null) {
            return null;
        }
        List<INDArray> parts = new ArrayList<>(arrays.size());
        for (int k = 0; k < arrays.size(); k++) {
            INDArray m = k < masks.size() ? masks.get(k) : null;
            if (m == null) {
                long[] s = template.clone();
                s[0] = arrays.get(k).rank() == 0 ? 1 : arrays.get(k).size(0);
                m = Nd4j.ones(s);
            }
            parts.add(m);
        }
        try {
            return Nd4j.vstack(parts);
        } catch (IllegalArgumentException e) {
            throw new DL4JInvalidInputException("cannot merge " + what + " masks" + ": " + e.getMessage(), e);
        }
    }

    private static INDArray[] mergeTimeSeries(List<INDArray> arrays, List<INDArray> masks, String what) {
        long size = arrays.get(0).size(1);
        long rows = 0;
        long maxSteps = 0;
        for (INDArray a : arrays) {
            if (a.size(1) != size) {
                throw new DL4JInvalidInputException("cannot merge " + what + ": time series of different sizes "
                        + Arrays.toString(arrays.get(0).shape()) + " and " + Arrays.toString(a.shape()));
            }
            rows += a.size(0);
            maxSteps = Math.max(maxSteps, a.size(2));
        }
        long[] shape = {rows, size, maxSteps};
        float[] out = new float[Math.toIntExact(NDArray.lengthOf(shape))];
        float[] mask = new float[Math.toIntExact(NDArray.lengthOf(new long[] {rows, maxSteps}))];
        int r0 = 0;
        for (int k = 0; k < arrays.size(); k++) {
            INDArray a = arrays.get(k);
            int n = Math.toIntExact(a.size(0));
            int steps = Math.toIntExact(a.size(2));
            float[] src = NDArray.internalData(a);
            for (int i = 0; i < n; i++) {
                for (int c = 0; c < size; c++) {
                    System.arraycopy(src, (int) ((i * size + c) * steps), out,
                            (int) (((r0 + i) * size + c) * maxSteps), steps);
                }
            }
            INDArray m = masks == null || k >= masks.size() ? null : masks.get(k);
            if (m == null) {
                for (int i = 0; i < n; i++) {
                    Arrays.fill(mask, (int) ((r0 + i) * maxSteps), (int) ((r0 + i) * maxSteps + steps), 1f);
                }
            } else {
                if (m.rank() != 2 || m.size(0) != n || m.size(1) != steps) {
                    throw new DL4JInvalidInputException("cannot merge " + what + ": part " + k + " is a time series of "
                            + steps + " steps " + Arrays.toString(a.shape()) + " but its mask has shape "
                            + Arrays.toString(m.shape()) + " (expected [" + n + ", " + steps + "])");
                }
                float[] ms = NDArray.internalData(m);
                for (int i = 0; i < n; i++) {
                    System.arraycopy(ms, i * steps, mask, (int) ((r0 + i) * maxSteps), steps);
                }
            }
            r0 += n;
        }
        return new INDArray[] {new NDArray(out, shape), new NDArray(mask, rows, maxSteps)};
    }
}
