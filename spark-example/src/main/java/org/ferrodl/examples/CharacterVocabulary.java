package org.ferrodl.examples;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * The characters (Unicode code points) a character model reads and predicts: one input and one
 * output unit per character, numbered in code point order. It turns text into one-hot time series —
 * features {@code [1, size, T]} of characters {@code 0..T-1}, labels {@code [1, size, T]} of characters
 * {@code 1..T} (each step's target is the next character) — and cuts a text into such sequences.
 *
 * <p>Immutable and serializable: the Spark example broadcasts it to the executors, which encode
 * their own strings (the one-hot arrays are {@code size} times larger than the text).
 */
public final class CharacterVocabulary implements Serializable {
    private static final long serialVersionUID = 1L;

    /** the characters, ascending; a character's index is its position here */
    private final int[] codePoints;

    private CharacterVocabulary(int[] sortedDistinct) {
        this.codePoints = sortedDistinct;
    }

    /**
     * @param text any text
     * @return the vocabulary of its distinct characters
     * @throws IllegalArgumentException when the text is empty
     */
    public static CharacterVocabulary of(String text) {
        int[] distinct = text.codePoints().sorted().distinct().toArray();
        if (distinct.length == 0) {
            throw new IllegalArgumentException("cannot build a character vocabulary from an empty text");
        }
        return new CharacterVocabulary(distinct);
    }

    /** @return the number of characters (the model's input and output width) */
    public int size() {
        return codePoints.length;
    }

    /** @return the index of {@code codePoint}, or -1 when it is not in the vocabulary */
    public int indexOf(int codePoint) {
        int i = Arrays.binarySearch(codePoints, codePoint);
        return i >= 0 ? i : -1;
    }

    /** @return the character of unit {@code index} */
    public int codePoint(int index) {
        if (index < 0 || index >= codePoints.length) {
            throw new IndexOutOfBoundsException("character index " + index + " outside [0, " + codePoints.length + ")");
        }
        return codePoints[index];
    }

    /** @return whether every character of {@code s} is in the vocabulary */
    public boolean covers(String s) {
        return s.codePoints().allMatch(c -> indexOf(c) >= 0);
    }

    /**
     * The indices of {@code text}'s characters.
     *
     * @throws IllegalArgumentException naming the first character that is not in the vocabulary and
     *                                  its position
     */
    public int[] indices(String text) {
        int[] cps = text.codePoints().toArray();
        int[] out = new int[cps.length];
        for (int i = 0; i < cps.length; i++) {
            out[i] = indexOf(cps[i]);
            if (out[i] < 0) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "character %s (U+%04X) at position %d is not in the vocabulary of %d characters",
                        describe(cps[i]), cps[i], i, codePoints.length));
            }
        }
        return out;
    }

    /**
     * One training sequence: {@code s} has T+1 characters; features are the one-hot characters
     * {@code 0..T-1} and labels the characters {@code 1..T}, both {@code [1, size, T]} (NCW), no masks.
     *
     * @throws IllegalArgumentException when {@code s} has fewer than 2 characters or one outside the
     *                                  vocabulary
     */
    public DataSet toDataSet(String s) {
        int[] idx = indices(s);
        if (idx.length < 2) {
            throw new IllegalArgumentException("a training sequence needs at least 2 characters (an input and the "
                    + "next one to predict), got " + idx.length);
        }
        int steps = idx.length - 1;
        float[] features = new float[codePoints.length * steps];
        float[] labels = new float[codePoints.length * steps];
        for (int t = 0; t < steps; t++) {
            features[idx[t] * steps + t] = 1f;      // [0, c, t] of a [1, C, T] c-order array
            labels[idx[t + 1] * steps + t] = 1f;
        }
        return new DataSet(Nd4j.create(features, 1, codePoints.length, steps),
                Nd4j.create(labels, 1, codePoints.length, steps));
    }

    /**
     * One-hot input of a few characters for {@code rnnTimeStep}: {@code [rows, size, T]} with the same
     * characters {@code s} in every row.
     */
    public INDArray oneHotRows(String s, int rows) {
        int[] idx = indices(s);
        int steps = idx.length;
        float[] data = new float[rows * codePoints.length * steps];
        for (int r = 0; r < rows; r++) {
            for (int t = 0; t < steps; t++) {
                data[(r * codePoints.length + idx[t]) * steps + t] = 1f;
            }
        }
        return Nd4j.create(data, rows, codePoints.length, steps);
    }

    /**
     * Cuts {@code text} into training sequences of {@code length} steps: sequence k holds characters
     * {@code k·length .. (k+1)·length} (length + 1 characters, the last one only as a label), so
     * consecutive sequences share one character and every character after the first is predicted
     * exactly once. The last sequence is shorter when the text does not divide evenly; a final piece
     * of a single character (nothing to predict) is dropped.
     *
     * @param text   the text
     * @param length steps per sequence, at least 1
     * @return the sequences, as strings of at most length + 1 characters
     */
    public static List<String> sequences(String text, int length) {
        if (length < 1) {
            throw new IllegalArgumentException("sequence length must be at least 1, got " + length);
        }
        int[] cps = text.codePoints().toArray();
        List<String> out = new ArrayList<>();
        for (int start = 0; start + 1 < cps.length; start += length) {
            int end = Math.min(cps.length, start + length + 1);
            out.add(new String(cps, start, end - start));
        }
        return out;
    }

    /** A printable name of a character for messages. */
    static String describe(int codePoint) {
        if (codePoint == '\n') {
            return "'\\n'";
        }
        if (Character.isISOControl(codePoint) || Character.isWhitespace(codePoint) && codePoint != ' ') {
            return String.format(Locale.ROOT, "\\u%04X", codePoint);
        }
        return "'" + new String(Character.toChars(codePoint)) + "'";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CharacterVocabulary v && Arrays.equals(codePoints, v.codePoints);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(codePoints);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("CharacterVocabulary[").append(codePoints.length).append(": ");
        for (int cp : codePoints) {
            sb.append(cp == '\n' ? "\\n" : new String(Character.toChars(cp)));
        }
        return sb.append(']').toString();
    }
}
