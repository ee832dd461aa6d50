package org.ferrodl.linalg.factory;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * Factory of {@link INDArray}s (float32, C order, on the Java heap).
 *
 * <p>Thread-safety: all methods are stateless and thread-safe; unseeded {@link #rand(long...)} uses
 * {@link ThreadLocalRandom}.
 */
public final class Nd4j {
    private Nd4j() {
    }

    /**
     * @param data C-order data (copied)
     * @param shape shape; none means a rank-1 array of {@code data.length} elements
     * @return the array
     */
    public static INDArray create(float[] data, long... shape) {
        return new NDArray(data.clone(), shape.length == 0 ? new long[] {data.length} : shape);
    }

    /**
     * @param data C-order data (converted to float)
     * @param shape shape; none means a rank-1 array
     * @return the array
     */
    public static INDArray create(double[] data, long... shape) {
        float[] f = new float[data.length];
        for (int i = 0; i < f.length; i++) {
            f[i] = (float) data[i];
        }
        return new NDArray(f, shape.length == 0 ? new long[] {data.length} : shape);
    }

    /**
     * @param data rows of equal length
     * @return a {@code rows × columns} matrix
     */
    public static INDArray create(float[][] data) {
        int r = data.length;
        int c = r == 0 ? 0 : data[0].length;
        float[] f = new float[Math.multiplyExact(r, c)];
        for (int i = 0; i < r; i++) {
            if (data[i].length != c) {
                throw new IllegalArgumentException("row " + i + " has " + data[i].length + " columns, expected " + c);
            }
            System.arraycopy(data[i], 0, f, i * c, c);
        }
        return new NDArray(f, r, c);
    }

    /**
     * @param data rows of equal length
     * @return a {@code rows × columns} matrix
     */
    public static INDArray create(double[][] data) {
        int r = data.length;
        int c = r == 0 ? 0 : data[0].length;
        float[] f = new float[Math.multiplyExact(r, c)];
        for (int i = 0; i < r; i++) {
            if (data[i].length != c) {
                throw new IllegalArgumentException("row " + i + " has " + data[i].length + " columns, expected " + c);
            }
            for (int j = 0; j < c; j++) {
                f[i * c + j] = (float) data[i][j];
            }
        }
        return new NDArray(f, r, c);
    }

    /**
     * @param values elements
     * @return a rank-1 array
     */
    public static INDArray createFromArray(float... values) {
        return create(values);
    }

    /**
     * @param values elements
     * @return a rank-1 array
     */
    public static INDArray createFromArray(double... values) {
        return create(values);
    }

    /**
     * @param values rows
     * @return a matrix
     */
    public static INDArray createFromArray(float[][] values) {
        return create(values);
    }

    /**
     * @param values rows
     * @return a matrix
     */
    public static INDArray createFromArray(double[][] values) {
        return create(values);
    }

    /**
     * @param shape shape
     * @return an array of zeros
     */
    public static INDArray zeros(long... shape) {
        return new NDArray(new float[(int) NDArray.lengthOf(shape)], shape);
    }

    /**
     * @param shape shape
     * @return an array of ones
     */
    public static INDArray ones(long... shape) {
        return valueArrayOf(shape, 1.0);
    }

    /**
     * @param shape shape
     * @param value fill value
     * @return an array filled with {@code value}
     */
    public static INDArray valueArrayOf(long[] shape, double value) {
        float[] f = new float[(int) NDArray.lengthOf(shape)];
        Arrays.fill(f, (float) value);
        return new NDArray(f, shape);
    }

    /**
     * @param shape shape
     * @return uniform random values in [0, 1), unseeded
     */
    public static INDArray rand(long... shape) {
        float[] f = new float[(int) NDArray.lengthOf(shape)];
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < f.length; i++) {
            f[i] = r.nextFloat();
        }
        return new NDArray(f, shape);
    }

    /**
     * Seeded uniform random values in [0, 1): the same seed and shape give the same array. The
     * shape is an explicit array, so {@code rand(42, new long[] {3, 4})}, never confused with
     * {@link #rand(long...)}.
     *
     * @param seed seed
     * @param shape shape
     * @return the array
     */
    public static INDArray rand(long seed, long[] shape) {
        float[] f = new float[(int) NDArray.lengthOf(shape)];
        Random r = new Random(seed);
        for (int i = 0; i < f.length; i++) {
            f[i] = r.nextFloat();
        }
        return new NDArray(f, shape);
    }

    /**
     * Concatenates arrays along dimension 0 (rows). All must have the same rank and the same sizes
     * in the other dimensions.
     *
     * @param arrays arrays to stack
     * @return a new array
     */
    public static INDArray vstack(INDArray... arrays) {
        return vstack(Arrays.asList(arrays));
    }

    /**
     * @param arrays arrays to stack along dimension 0
     * @return a new array
     * @see #vstack(INDArray...)
     */
    public static INDArray vstack(List<? extends INDArray> arrays) {
        if (arrays.isEmpty()) {
            throw new IllegalArgumentException("vstack of no arrays");
        }
        long[] first = arrays.get(0).shape();
        if (first.length == 0) {
            throw new IllegalArgumentException("vstack needs arrays of rank >= 1");
        }
        long rows = 0;
        long total = 0;
        for (INDArray a : arrays) {
            long[] s = a.shape();
            if (s.length != first.length || !Arrays.equals(Arrays.copyOfRange(s, 1, s.length),
                    Arrays.copyOfRange(first, 1, first.length))) {
                throw new IllegalArgumentException("vstack: shape " + Arrays.toString(s) + " is incompatible with "
                        + Arrays.toString(first));
            }
            rows += s[0];
            total += a.length();
        }
        long[] shape = first.clone();
        shape[0] = rows;
        float[] out = new float[(int) NDArray.lengthOf(shape)];
        int pos = 0;
        for (INDArray a : arrays) {
            float[] d = NDArray.internalData(a);
            System.arraycopy(d, 0, out, pos, d.length);
            pos += d.length;
        }
        assert pos == total;
        return new NDArray(out, shape);
    }
}
