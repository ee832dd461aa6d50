package org.ferrodl.evaluation.classification;

import java.io.Serializable;
import java.util.Arrays;

/**
 * Counts of (actual class, predicted class) pairs for classes {@code 0..numClasses-1}.
 * Not thread-safe.
 */
public class ConfusionMatrix implements Serializable {
    private static final long serialVersionUID = 1L;

    private int numClasses;
    private long[] counts;

    /** For Kryo. */
    private ConfusionMatrix() {
        this(0);
    }

    /** @param numClasses number of classes */
    public ConfusionMatrix(int numClasses) {
        if (numClasses < 0) {
            throw new IllegalArgumentException("numClasses must be >= 0, got " + numClasses);
        }
        this.numClasses = numClasses;
        this.counts = new long[Math.multiplyExact(numClasses, numClasses)];
    }

    /** @return number of classes */
    public int getNumClasses() {
        return numClasses;
    }

    private int index(int actual, int predicted) {
        if (actual < 0 || actual >= numClasses || predicted < 0 || predicted >= numClasses) {
            throw new IndexOutOfBoundsException("class (" + actual + ", " + predicted + ") out of range for "
                    + numClasses + " classes");
        }
        return actual * numClasses + predicted;
    }

    /**
     * Adds one to the count of {@code (actual, predicted)}.
     *
     * @param actual actual class
     * @param predicted predicted class
     */
    public void add(int actual, int predicted) {
        add(actual, predicted, 1);
    }

    /**
     * @param actual actual class
     * @param predicted predicted class
     * @param count amount to add
     */
    public void add(int actual, int predicted, long count) {
        counts[index(actual, predicted)] += count;
    }

    /** @param other a matrix with the same number of classes, added element-wise */
    public void add(ConfusionMatrix other) {
        if (other.numClasses != numClasses) {
            throw new IllegalArgumentException("cannot add a confusion matrix of " + other.numClasses
                    + " classes to one of " + numClasses);
        }
        for (int i = 0; i < counts.length; i++) {
            counts[i] += other.counts[i];
        }
    }

    /**
     * @param actual actual class
     * @param predicted predicted class
     * @return how many examples of class {@code actual} were predicted as {@code predicted}
     */
    public long getCount(int actual, int predicted) {
        return counts[index(actual, predicted)];
    }

    /**
     * @param actual a class
     * @return the number of examples whose actual class is {@code actual}
     */
    public long getActualTotal(int actual) {
        long s = 0;
        for (int p = 0; p < numClasses; p++) {
            s += getCount(actual, p);
        }
        return s;
    }

    /**
     * @param predicted a class
     * @return the number of examples predicted as {@code predicted}
     */
    public long getPredictedTotal(int predicted) {
        long s = 0;
        for (int a = 0; a < numClasses; a++) {
            s += getCount(a, predicted);
        }
        return s;
    }

    /** @return a copy */
    public ConfusionMatrix copy() {
        ConfusionMatrix c = new ConfusionMatrix(numClasses);
        System.arraycopy(counts, 0, c.counts, 0, counts.length);
        return c;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConfusionMatrix && ((ConfusionMatrix) o).numClasses == numClasses
                && Arrays.equals(((ConfusionMatrix) o).counts, counts);
    }

    @Override
    public int hashCode() {
        return 31 * numClasses + Arrays.hashCode(counts);
    }

    /** @return the matrix as text: rows are actual classes, columns predicted classes */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        int w = 6;
        for (long c : counts) {
            w = Math.max(w, Long.toString(c).length() + 1);
        }
        sb.append(String.format("%" + w + "s", "a\\p"));
        for (int p = 0; p < numClasses; p++) {
            sb.append(String.format("%" + w + "d", p));
        }
        sb.append('\n');
        for (int a = 0; a < numClasses; a++) {
            sb.append(String.format("%" + w + "d", a));
            for (int p = 0; p < numClasses; p++) {
                sb.append(String.format("%" + w + "d", getCount(a, p)));
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
