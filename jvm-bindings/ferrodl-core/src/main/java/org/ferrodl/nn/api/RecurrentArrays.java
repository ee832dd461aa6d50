package org.ferrodl.nn.api;

import org.ferrodl.nn.conf.RNNFormat;
import org.ferrodl.nn.conf.layers.RnnLossLayer;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * How time series and their masks cross JNI for both network types (RNN_CONTRACT.md): a
 * {@code [N, C, T]} array is {@code N} rows of {@code C·T} values (its C-order data as is), a mask
 * {@code [N, T]} is {@code N} rows of {@code T} (a per-example mask {@code [N]} or {@code [N, 1]}: one
 * column), a recurrent output of {@code nOut·T} values per row comes back as {@code [N, nOut, T]},
 * and a layer's stored state is a map of {@code [rows, size]} arrays. The widths themselves are the
 * engine's checks; only the ranks are refused here, where the reference refuses them.
 */
public final class RecurrentArrays {
    private RecurrentArrays() {
    }

    /**
     * The number of values per row of a features or labels array: everything after axis 0.
     *
     * @param a an array with the examples along axis 0 (rank 2 or 3)
     * @param rows its number of examples
     * @return the row width
     */
    public static int rowWidth(INDArray a, int rows) {
        if (a.rank() == 2) {
            return Math.toIntExact(a.size(1));
        }
        return rows == 0 ? Math.toIntExact(a.length() / Math.max(1, a.size(0)))
                : Math.toIntExact(a.length() / rows);
    }

    /**
     * Refuses a features array the first layer cannot take: a recurrent layer needs
     * {@code [examples, size, timeSteps]}, as in the reference (only {@code rnnTimeStep} reads a
     * rank-2 array as one step).
     *
     * @param a the features
     * @param recurrentInput whether the first layer is recurrent
     * @param what the array's name in messages
     */
    public static void checkRank(INDArray a, boolean recurrentInput, String what) {
        if (recurrentInput && a.rank() != 3) {
            throw new DL4JInvalidInputException(what + " of a recurrent layer must be a time series [examples, size, "
                    + "timeSteps] (rank 3), got shape " + Arrays.toString(a.shape())
                    + (a.rank() == 2 ? " (reshape a single step to [examples, size, 1]; rnnTimeStep takes [examples, "
                    + "size])" : ""));
        }
        if (!recurrentInput && a.rank() != 2) {
            throw new DL4JInvalidInputException(what + " must be a matrix [examples, columns], got shape "
                    + Arrays.toString(a.shape()));
        }
    }

    /**
     * @param mask a mask or null
     * @param what its name in messages
     * @return its number of columns: {@code T} for {@code [N, T]}, 1 for a per-example {@code [N]}; 0 for none
     * @throws DL4JInvalidInputException for a mask of rank 3 or more
     */
    public static int maskCols(INDArray mask, String what) {
        if (mask == null) {
            return 0;
        }
        if (mask.rank() == 1) {
            return 1;
        }
        if (mask.rank() != 2) {
            throw new DL4JInvalidInputException(what + " must be [examples, timeSteps] (or [examples, 1] per example), "
                    + "got shape " + Arrays.toString(mask.shape()));
        }
        return Math.toIntExact(mask.size(1));
    }

    /**
     * @param out the engine's output, {@code rows × (size·T)}
     * @param rows the number of examples
     * @param size the output size per time step
     * @return {@code [rows, size, T]}
     */
    public static INDArray series(float[] out, int rows, long size) {
        return series(out, rows, size, RNNFormat.NCW);
    }

    /**
     * @param out the engine's output, {@code rows × (size·T)} in {@code format}'s order (the engine
     *        converts an NWC output itself)
     * @param rows the number of examples
     * @param size the output size per time step
     * @param format the output layer's {@code rnnDataFormat}
     * @return {@code [rows, size, T]} (NCW) or {@code [rows, T, size]} (NWC)
     */
    public static INDArray series(float[] out, int rows, long size, RNNFormat format) {
        long steps = rows == 0 || size == 0 ? 0 : out.length / ((long) rows * size);
        return format == RNNFormat.NWC ? new NDArray(out, rows, steps, size) : new NDArray(out, rows, size, steps);
    }

    /**
     * Evaluates a batch: an NWC output's labels, predictions and per-output mask ({@code [N, T, C]})
     * are given to the evaluation as {@code [N, C, T]}, the layout every evaluation reads.
     *
     * @param e the evaluation
     * @param labels the labels
     * @param predictions the network's output
     * @param labelsMask null, {@code [N, T]} or the labels' shape
     * @param format the output's layout
     */
    public static void eval(org.ferrodl.evaluation.IEvaluation<?> e, INDArray labels, INDArray predictions,
            INDArray labelsMask, RNNFormat format) {
        e.eval(ncw(labels, format), ncw(predictions, format), ncw(labelsMask, format));
    }

    /** An NWC {@code [N, T, C]} array as {@code [N, C, T]}; anything else as it is. */
    private static INDArray ncw(INDArray a, RNNFormat format) {
        if (a == null || format != RNNFormat.NWC || a.rank() != 3) {
            return a;
        }
        int n = Math.toIntExact(a.size(0));
        int t = Math.toIntExact(a.size(1));
        int c = Math.toIntExact(a.size(2));
        float[] src = NDArray.internalData(a);
        float[] out = new float[src.length];
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < t; s++) {
                for (int k = 0; k < c; k++) {
                    out[i * t * c + k * t + s] = src[i * t * c + s * c + k];
                }
            }
        }
        return new NDArray(out, n, c, t);
    }

    /**
     * @param layer a network's output layer (wrappers already removed)
     * @return its {@code rnnDataFormat} (NCW for layers without one)
     */
    public static RNNFormat outputFormat(org.ferrodl.nn.conf.layers.Layer layer) {
        if (layer instanceof RnnOutputLayer) {
            return ((RnnOutputLayer) layer).getRnnDataFormat();
        }
        if (layer instanceof RnnLossLayer) {
            return ((RnnLossLayer) layer).getRnnDataFormat();
        }
        return RNNFormat.NCW;
    }

    /**
     * @param mask a labels mask or null: {@code [N, T]}, one value per example, or per output and step
     *        ({@code [N, nOut, T]}, the labels' shape, as the reference allows)
     * @return its number of columns as the engine reads it ({@code nOut·T} for a per-output mask)
     */
    public static int labelsMaskCols(INDArray mask) {
        if (mask != null && mask.rank() == 3) {
            return Math.toIntExact(mask.size(1) * mask.size(2));
        }
        return maskCols(mask, "the labels mask");
    }

    /**
     * A layer's stored state as the reference's map (key to {@code [rows, size]}).
     *
     * @param keys the state's keys, in the engine's order
     * @param get the values of one key ({@code rows × size}), or null when none is stored
     * @param rows the minibatch size the state belongs to
     * @return the map (empty when nothing is stored)
     */
    public static Map<String, INDArray> stateMap(String[] keys, Function<String, float[]> get, int rows) {
        Map<String, INDArray> out = new LinkedHashMap<>();
        for (String k : keys) {
            float[] v = get.apply(k);
            if (v != null && rows > 0) {
                out.put(k, new NDArray(v, rows, v.length / rows));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * Checks a state value given to {@code rnnSetPreviousState}: a {@code [rows, size]} matrix.
     *
     * @param key its key
     * @param v the value
     * @return its number of rows
     */
    public static int stateRows(String key, INDArray v) {
        if (v == null || v.rank() != 2) {
            throw new DL4JInvalidInputException("the state \"" + key + "\" must be a matrix [examples, size], got "
                    + (v == null ? "null" : "shape " + Arrays.toString(v.shape())));
        }
        return Math.toIntExact(v.size(0));
    }
}
