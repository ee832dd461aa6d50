package org.ferrodl.bench.jvm;

import java.util.Random;

/**
 * The character model's data for the LSTM rows: minibatches of {@code rows} sequences of
 * {@code length} one-hot characters over a vocabulary of {@code vocab}, the labels the next
 * character (the reference's CharacterIterator layout: features and labels {@code [rows, vocab,
 * length]}, c-order, here flattened row-major). The text is synthetic, so every system (and
 * jax/lstm_bench.py, which reproduces this generator with the same java.util.Random) sees the very
 * same characters: after a random first character each next one is the previous plus 1, 2 or 3
 * (uniformly, modulo the vocabulary). Throughput does not depend on the text; the generator has
 * something to learn (the next character is one of three, an entropy of ln 3 = 1.10 nats against
 * ln 77 = 4.34 for a guess), so the final score and the next-character accuracy (at most about 1/3)
 * show that a system really trained.
 */
public final class CharData {
    public final int rows;
    public final int vocab;
    public final int length;
    /** features of minibatch i, {@code rows x vocab x length} */
    public final float[][] features;
    public final float[][] labels;
    /** the next-character index of every (row, step) of minibatch i, {@code rows x length} */
    public final int[][] next;

    private CharData(int rows, int vocab, int length, int batches) {
        this.rows = rows;
        this.vocab = vocab;
        this.length = length;
        features = new float[batches][];
        labels = new float[batches][];
        next = new int[batches][];
    }

    /** {@code batches} minibatches; sequence {@code r} of minibatch {@code b} is generated from
     *  {@code new Random(seed + b * rows + r)}. */
    public static CharData generate(int batches, int rows, int vocab, int length, long seed) {
        CharData d = new CharData(rows, vocab, length, batches);
        for (int b = 0; b < batches; b++) {
            float[] f = new float[rows * vocab * length];
            float[] l = new float[rows * vocab * length];
            int[] nx = new int[rows * length];
            for (int r = 0; r < rows; r++) {
                Random rng = new Random(seed + (long) b * rows + r);
                int c = rng.nextInt(vocab);
                for (int s = 0; s < length; s++) {
                    int n = (c + 1 + rng.nextInt(3)) % vocab;
                    f[(r * vocab + c) * length + s] = 1f;
                    l[(r * vocab + n) * length + s] = 1f;
                    nx[r * length + s] = n;
                    c = n;
                }
            }
            d.features[b] = f;
            d.labels[b] = l;
            d.next[b] = nx;
        }
        return d;
    }

    public int size() {
        return features.length;
    }

    /** characters (examples) of one minibatch */
    public int characters() {
        return rows * length;
    }

    /** The share of (row, step) whose largest output {@code [rows, vocab, length]} is the next character. */
    public double accuracy(int b, float[] out) {
        int correct = 0;
        for (int r = 0; r < rows; r++) {
            for (int s = 0; s < length; s++) {
                int best = 0;
                for (int c = 1; c < vocab; c++) {
                    if (out[(r * vocab + c) * length + s] > out[(r * vocab + best) * length + s]) {
                        best = c;
                    }
                }
                if (best == next[b][r * length + s]) {
                    correct++;
                }
            }
        }
        return correct / (double) (rows * length);
    }
}
