package org.ferrodl.linalg.api.ndarray;

import java.io.Serializable;

/**
 * An n-dimensional array of 32-bit floats in C (row-major) order, held on the Java heap.
 *
 * <p>Unlike the reference, arrays have no native storage: they serialize with Java serialization and
 * Kryo (no registrator needed) and never hold off-heap memory that Spark does not count. Views are
 * not supported: {@link #getRow(long)}, {@link #reshape(long...)} and the arithmetic methods without
 * an {@code i} suffix return copies; methods ending in {@code i} modify this array in place.
 *
 * <p>Indices are {@code long} for API compatibility; an array holds at most
 * {@code Integer.MAX_VALUE - 8} elements. Not thread-safe for concurrent mutation.
 */
public interface INDArray extends Serializable {

    /** @return a copy of the shape */
    long[] shape();

    /** @return the number of dimensions */
    int rank();

    /**
     * @param dimension a dimension, negative counts from the end
     * @return the size of that dimension
     */
    long size(int dimension);

    /** @return the total number of elements */
    long length();

    /** @return the number of rows: {@code shape[0]} for a matrix, 1 for a vector */
    long rows();

    /** @return the number of columns: {@code shape[1]} for a matrix, the length for a vector */
    long columns();

    /** @return true when the rank is 2 */
    boolean isMatrix();

    /** @return true when the rank is 1, or the rank is 2 with one row or one column */
    boolean isVector();

    /** @return true when the rank is 1, or the rank is 2 with one row */
    boolean isRowVector();

    /** @return true when the rank is 2 with one column */
    boolean isColumnVector();

    /** @return true when the array has exactly one element */
    boolean isScalar();

    /** @return true when the array has no elements */
    boolean isEmpty();

    /** @return {@code 'c'}: arrays are always row-major */
    char ordering();

    /**
     * @param i linear (C-order) index
     * @return the element
     */
    float getFloat(long i);

    /**
     * @param indices one index per dimension
     * @return the element
     */
    float getFloat(long... indices);

    /**
     * @param i linear (C-order) index
     * @return the element as a double
     */
    double getDouble(long i);

    /**
     * @param indices one index per dimension
     * @return the element as a double
     */
    double getDouble(long... indices);

    /**
     * @param i linear (C-order) index
     * @param value new value (rounded to float)
     * @return this array
     */
    INDArray putScalar(long i, double value);

    /**
     * @param row row index of a matrix
     * @param col column index
     * @param value new value
     * @return this array
     */
    INDArray putScalar(long row, long col, double value);

    /**
     * @param indices one index per dimension
     * @param value new value
     * @return this array
     */
    INDArray putScalar(long[] indices, double value);

    /** @return a copy of the data in C order */
    float[] toFloatVector();

    /** @return the data in C order, as doubles */
    double[] toDoubleVector();

    /** @return a copy of a matrix as {@code float[rows][columns]} */
    float[][] toFloatMatrix();

    /** @return a copy of a matrix as {@code double[rows][columns]} */
    double[][] toDoubleMatrix();

    /** @return an independent copy */
    INDArray dup();

    /**
     * @param newShape the new shape; one entry may be -1 (inferred)
     * @return a copy with the new shape and the same data
     */
    INDArray reshape(long... newShape);

    /**
     * @param row row of a matrix
     * @return a copy of the row as a rank-1 array of length {@link #columns()}
     */
    INDArray getRow(long row);

    /**
     * @param row row of a matrix
     * @param keepDim true: shape {@code [1, columns]}; false: shape {@code [columns]}
     * @return a copy of the row
     */
    INDArray getRow(long row, boolean keepDim);

    /**
     * @param from first row (inclusive)
     * @param to last row (exclusive)
     * @return a copy of rows {@code [from, to)} along dimension 0 (any rank)
     */
    INDArray getRows(long from, long to);

    /**
     * Index of the maximum. With no dimension, over the whole array (scalar result); with dimension 1
     * of a matrix, per row (shape {@code [rows]}); with dimension 0, per column (shape
     * {@code [columns]}). Ties go to the lowest index; NaN counts as the maximum.
     *
     * @param dimension none, or one dimension of a matrix
     * @return the indices, as float values
     */
    INDArray argMax(int... dimension);

    /** @return the sum of all elements */
    Number sumNumber();

    /** @return the mean of all elements */
    Number meanNumber();

    /**
     * @param other same shape
     * @return a new array {@code this + other}
     */
    INDArray add(INDArray other);

    /**
     * @param other same shape
     * @return this array after {@code this += other}
     */
    INDArray addi(INDArray other);

    /**
     * @param other same shape
     * @return a new array {@code this - other}
     */
    INDArray sub(INDArray other);

    /**
     * @param other same shape
     * @return this array after {@code this -= other}
     */
    INDArray subi(INDArray other);

    /**
     * @param scalar factor
     * @return a new array {@code this * scalar}
     */
    INDArray mul(Number scalar);

    /**
     * @param scalar factor
     * @return this array after {@code this *= scalar}
     */
    INDArray muli(Number scalar);

    /**
     * @param scalar divisor
     * @return a new array {@code this / scalar}
     */
    INDArray div(Number scalar);

    /**
     * @param scalar divisor
     * @return this array after {@code this /= scalar}
     */
    INDArray divi(Number scalar);

    /**
     * @param other another array
     * @param eps absolute tolerance
     * @return true when the shapes are equal and every element differs by at most {@code eps}
     */
    boolean equalsWithEps(Object other, double eps);

    /**
     * Exact equality: same shape and bit-identical values (NaN equals NaN), consistent with
     * {@link #hashCode()}. Use {@link #equalsWithEps(Object, double)} for a tolerance.
     *
     * @param other another object
     * @return true when equal
     */
    @Override
    boolean equals(Object other);

    @Override
    int hashCode();
}
