package org.ferrodl.linalg.cpu.nativecpu;

import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.util.Arrays;
import org.ferrodl.linalg.api.ndarray.INDArray;

/**
 * The heap implementation of {@link INDArray}: a {@code float[]} in C order and a {@code long[]}
 * shape. Serializable with Java serialization and with Kryo's default field serializer (it has a
 * no-argument constructor and no native state).
 *
 * <p>Not thread-safe for concurrent mutation.
 */
public class NDArray implements INDArray {
    private static final long serialVersionUID = 1L;

    /** Largest supported element count. */
    public static final int MAX_LENGTH = Integer.MAX_VALUE - 8;

    private float[] data;
    private long[] shape;

    /** For Kryo; creates an empty rank-1 array. */
    private NDArray() {
        this.data = new float[0];
        this.shape = new long[] {0};
    }

    /**
     * Wraps {@code data} without copying.
     *
     * @param data C-order data (taken over, not copied)
     * @param shape shape (copied); its product must equal {@code data.length}
     */
    public NDArray(float[] data, long... shape) {
        if (data == null || shape == null) {
            throw new IllegalArgumentException("data and shape must not be null");
        }
        long n = lengthOf(shape);
        if (n != data.length) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has " + n
                    + " elements but the data has " + data.length);
        }
        this.data = data;
        this.shape = shape.clone();
    }

    /**
     * @param shape a shape
     * @return the number of elements
     * @throws IllegalArgumentException for negative sizes or more than {@link #MAX_LENGTH} elements
     */
    public static long lengthOf(long[] shape) {
        long n = 1;
        for (long s : shape) {
            if (s < 0) {
                throw new IllegalArgumentException("negative size in shape " + Arrays.toString(shape));
            }
            n = Math.multiplyExact(n, s);
            if (n > MAX_LENGTH) {
                throw new IllegalArgumentException("shape " + Arrays.toString(shape)
                        + " has more elements than a heap array can hold (" + MAX_LENGTH + ")");
            }
        }
        return n;
    }

    /**
     * The backing array, not copied: for ferrodl internals that pass data across JNI without an
     * extra copy. Callers must not modify it unless they own this array.
     *
     * @param array an array
     * @return its data in C order
     */
    public static float[] internalData(INDArray array) {
        return array instanceof NDArray ? ((NDArray) array).data : array.toFloatVector();
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        if (data == null || shape == null) {
            throw new InvalidObjectException("NDArray without data or shape");
        }
        try {
            if (lengthOf(shape) != data.length) {
                throw new InvalidObjectException("NDArray shape " + Arrays.toString(shape)
                        + " does not match " + data.length + " elements");
            }
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new InvalidObjectException("NDArray with invalid shape: " + e.getMessage());
        }
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    @Override
    public int rank() {
        return shape.length;
    }

    @Override
    public long size(int dimension) {
        int d = dimension < 0 ? dimension + shape.length : dimension;
        if (d < 0 || d >= shape.length) {
            throw new IllegalArgumentException("dimension " + dimension + " out of range for rank " + shape.length);
        }
        return shape[d];
    }

    @Override
    public long length() {
        return data.length;
    }

    @Override
    public long rows() {
        if (shape.length == 2) {
            return shape[0];
        }
        if (shape.length <= 1) {
            return 1;
        }
        throw new IllegalStateException("rows() needs a vector or matrix, shape is " + Arrays.toString(shape));
    }

    @Override
    public long columns() {
        if (shape.length == 2) {
            return shape[1];
        }
        if (shape.length == 1) {
            return shape[0];
        }
        if (shape.length == 0) {
            return 1;
        }
        throw new IllegalStateException("columns() needs a vector or matrix, shape is " + Arrays.toString(shape));
    }

    @Override
    public boolean isMatrix() {
        return shape.length == 2;
    }

    @Override
    public boolean isVector() {
        return shape.length == 1 || (shape.length == 2 && (shape[0] == 1 || shape[1] == 1));
    }

    @Override
    public boolean isRowVector() {
        return shape.length == 1 || (shape.length == 2 && shape[0] == 1);
    }

    @Override
    public boolean isColumnVector() {
        return shape.length == 2 && shape[1] == 1;
    }

    @Override
    public boolean isScalar() {
        return data.length == 1;
    }

    @Override
    public boolean isEmpty() {
        return data.length == 0;
    }

    @Override
    public char ordering() {
        return 'c';
    }

    private int linear(long i) {
        if (i < 0 || i >= data.length) {
            throw new IndexOutOfBoundsException("index " + i + " out of range for length " + data.length);
        }
        return (int) i;
    }

    private int offset(long[] indices) {
        if (indices.length == 1 && shape.length != 1) {
            return linear(indices[0]);
        }
        if (indices.length != shape.length) {
            throw new IllegalArgumentException(indices.length + " indices for an array of rank " + shape.length);
        }
        long off = 0;
        for (int d = 0; d < shape.length; d++) {
            if (indices[d] < 0 || indices[d] >= shape[d]) {
                throw new IndexOutOfBoundsException("index " + indices[d] + " out of range for dimension " + d
                        + " of size " + shape[d]);
            }
            off = off * shape[d] + indices[d];
        }
        return (int) off;
    }

    @Override
    public float getFloat(long i) {
        return data[linear(i)];
    }

    @Override
    public float getFloat(long... indices) {
        return data[offset(indices)];
    }

    @Override
    public double getDouble(long i) {
        return data[linear(i)];
    }

    @Override
    public double getDouble(long... indices) {
        return data[offset(indices)];
    }

    @Override
    public INDArray putScalar(long i, double value) {
        data[linear(i)] = (float) value;
        return this;
    }

    @Override
    public INDArray putScalar(long row, long col, double value) {
        data[offset(new long[] {row, col})] = (float) value;
        return this;
    }

    @Override
    public INDArray putScalar(long[] indices, double value) {
        data[offset(indices)] = (float) value;
        return this;
    }

    @Override
    public float[] toFloatVector() {
        return data.clone();
    }

    @Override
    public double[] toDoubleVector() {
        double[] d = new double[data.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = data[i];
        }
        return d;
    }

    private void requireMatrix(String op) {
        if (shape.length != 2) {
            throw new IllegalStateException(op + " needs a matrix (rank 2), shape is " + Arrays.toString(shape));
        }
    }

    @Override
    public float[][] toFloatMatrix() {
        requireMatrix("toFloatMatrix()");
        int r = (int) shape[0];
        int c = (int) shape[1];
        float[][] m = new float[r][c];
        for (int i = 0; i < r; i++) {
            System.arraycopy(data, i * c, m[i], 0, c);
        }
        return m;
    }

    @Override
    public double[][] toDoubleMatrix() {
        requireMatrix("toDoubleMatrix()");
        int r = (int) shape[0];
        int c = (int) shape[1];
        double[][] m = new double[r][c];
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < c; j++) {
                m[i][j] = data[i * c + j];
            }
        }
        return m;
    }

    @Override
    public NDArray dup() {
        return new NDArray(data.clone(), shape);
    }

    @Override
    public INDArray reshape(long... newShape) {
        long[] s = newShape.clone();
        int infer = -1;
        long known = 1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == -1) {
                if (infer >= 0) {
                    throw new IllegalArgumentException("at most one -1 in shape " + Arrays.toString(newShape));
                }
                infer = i;
            } else if (s[i] < 0) {
                throw new IllegalArgumentException("invalid shape " + Arrays.toString(newShape));
            } else {
                known *= s[i];
            }
        }
        if (infer >= 0) {
            if (known == 0 || data.length % known != 0) {
                throw new IllegalArgumentException("cannot reshape " + Arrays.toString(shape) + " to "
                        + Arrays.toString(newShape));
            }
            s[infer] = data.length / known;
        }
        if (lengthOf(s) != data.length) {
            throw new IllegalArgumentException("cannot reshape " + Arrays.toString(shape) + " (" + data.length
                    + " elements) to " + Arrays.toString(newShape));
        }
        return new NDArray(data.clone(), s);
    }

    @Override
    public INDArray getRow(long row) {
        return getRow(row, false);
    }

    @Override
    public INDArray getRow(long row, boolean keepDim) {
        requireMatrix("getRow");
        if (row < 0 || row >= shape[0]) {
            throw new IndexOutOfBoundsException("row " + row + " out of range for " + shape[0] + " rows");
        }
        int c = (int) shape[1];
        float[] d = Arrays.copyOfRange(data, (int) row * c, (int) row * c + c);
        return keepDim ? new NDArray(d, 1, c) : new NDArray(d, c);
    }

    @Override
    public INDArray getRows(long from, long to) {
        if (shape.length == 0) {
            throw new IllegalStateException("getRows needs rank >= 1");
        }
        if (from < 0 || to > shape[0] || from > to) {
            throw new IndexOutOfBoundsException("rows [" + from + ", " + to + ") out of range for size " + shape[0]);
        }
        int per = shape[0] == 0 ? 0 : data.length / (int) shape[0];
        long[] s = shape.clone();
        s[0] = to - from;
        return new NDArray(Arrays.copyOfRange(data, (int) from * per, (int) to * per), s);
    }

    @Override
    public INDArray argMax(int... dimension) {
        if (dimension == null || dimension.length == 0 || (dimension.length == 1 && dimension[0] == Integer.MAX_VALUE)) {
            return new NDArray(new float[] {argMaxRange(0, data.length, 1)}, new long[0]);
        }
        if (dimension.length != 1) {
            throw new IllegalArgumentException("argMax supports one dimension, got " + Arrays.toString(dimension));
        }
        if (shape.length == 1 && (dimension[0] == 0 || dimension[0] == -1)) {
            return new NDArray(new float[] {argMaxRange(0, data.length, 1)}, 1);
        }
        requireMatrix("argMax along a dimension");
        int r = (int) shape[0];
        int c = (int) shape[1];
        int d = dimension[0] < 0 ? dimension[0] + 2 : dimension[0];
        if (d == 1) {
            float[] out = new float[r];
            for (int i = 0; i < r; i++) {
                out[i] = argMaxRange(i * c, c, 1);
            }
            return new NDArray(out, r);
        } else if (d == 0) {
            float[] out = new float[c];
            for (int j = 0; j < c; j++) {
                out[j] = argMaxRange(j, r, c);
            }
            return new NDArray(out, c);
        }
        throw new IllegalArgumentException("dimension " + dimension[0] + " out of range for a matrix");
    }

    /** Index (0..count-1) of the maximum among data[start + k*stride]; NaN wins, ties go low. */
    private int argMaxRange(int start, int count, int stride) {
        int best = 0;
        float bestV = count > 0 ? data[start] : Float.NaN;
        for (int k = 1; k < count && !Float.isNaN(bestV); k++) {
            float v = data[start + k * stride];
            if (v > bestV || Float.isNaN(v)) {
                best = k;
                bestV = v;
            }
        }
        return best;
    }

    @Override
    public Number sumNumber() {
        double s = 0;
        for (float v : data) {
            s += v;
        }
        return s;
    }

    @Override
    public Number meanNumber() {
        return data.length == 0 ? Double.NaN : sumNumber().doubleValue() / data.length;
    }

    private float[] sameShapeData(INDArray other, String op) {
        if (!Arrays.equals(shape, other.shape())) {
            throw new IllegalArgumentException(op + ": shapes differ, " + Arrays.toString(shape) + " vs "
                    + Arrays.toString(other.shape()));
        }
        return internalData(other);
    }

    @Override
    public INDArray add(INDArray other) {
        return dup().addi(other);
    }

    @Override
    public INDArray addi(INDArray other) {
        float[] o = sameShapeData(other, "add");
        for (int i = 0; i < data.length; i++) {
            data[i] += o[i];
        }
        return this;
    }

    @Override
    public INDArray sub(INDArray other) {
        return dup().subi(other);
    }

    @Override
    public INDArray subi(INDArray other) {
        float[] o = sameShapeData(other, "sub");
        for (int i = 0; i < data.length; i++) {
            data[i] -= o[i];
        }
        return this;
    }

    @Override
    public INDArray mul(Number scalar) {
        return dup().muli(scalar);
    }

    @Override
    public INDArray muli(Number scalar) {
        float s = scalar.floatValue();
        for (int i = 0; i < data.length; i++) {
            data[i] *= s;
        }
        return this;
    }

    @Override
    public INDArray div(Number scalar) {
        return dup().divi(scalar);
    }

    @Override
    public INDArray divi(Number scalar) {
        float s = scalar.floatValue();
        for (int i = 0; i < data.length; i++) {
            data[i] /= s;
        }
        return this;
    }

    @Override
    public boolean equalsWithEps(Object other, double eps) {
        if (!(other instanceof INDArray)) {
            return false;
        }
        INDArray o = (INDArray) other;
        if (!Arrays.equals(shape, o.shape())) {
            return false;
        }
        float[] od = internalData(o);
        for (int i = 0; i < data.length; i++) {
            float a = data[i];
            float b = od[i];
            if (Float.isNaN(a) || Float.isNaN(b)) {
                if (Float.isNaN(a) != Float.isNaN(b)) {
                    return false;
                }
            } else if (a != b && !(Math.abs((double) a - b) <= eps)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof INDArray)) {
            return false;
        }
        INDArray o = (INDArray) other;
        return Arrays.equals(shape, o.shape()) && Arrays.equals(data, internalData(o));
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(shape) + Arrays.hashCode(data);
    }

    /** Prints up to 1,000 elements like the reference: nested brackets, 4 decimals. */
    @Override
    public String toString() {
        if (data.length > 1000) {
            return "NDArray(shape=" + Arrays.toString(shape) + ", " + data.length + " elements, first "
                    + Arrays.toString(Arrays.copyOf(data, 10)) + " ...)";
        }
        StringBuilder sb = new StringBuilder();
        append(sb, 0, 0);
        return sb.toString();
    }

    private int append(StringBuilder sb, int dim, int pos) {
        if (dim == shape.length) {
            sb.append(String.format(java.util.Locale.ROOT, "%.4f", data[pos]));
            return pos + 1;
        }
        sb.append('[');
        for (long i = 0; i < shape[dim]; i++) {
            if (i > 0) {
                sb.append(dim == shape.length - 1 ? ", " : ",\n" + " ".repeat(dim + 1));
            }
            pos = append(sb, dim + 1, pos);
        }
        sb.append(']');
        return pos;
    }
}
