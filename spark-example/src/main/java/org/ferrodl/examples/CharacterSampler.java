package org.ferrodl.examples;

import java.util.Arrays;
import java.util.Random;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Generates text from a character model step by step with {@link MultiLayerNetwork#rnnTimeStep}:
 * the start text is fed in one call, then each next character is drawn from the softmax output and
 * fed back as the next step. Several samples run together as the rows of one minibatch.
 */
public final class CharacterSampler {
    private CharacterSampler() {
    }

    /**
     * @param net        a trained character model (input and output width = the vocabulary's size)
     * @param vocabulary its characters
     * @param start      the text the samples continue (at least one character, all in the vocabulary)
     * @param characters characters to generate per sample
     * @param count      number of samples
     * @param rng        source of the draws
     * @return {@code count} strings, each {@code start} followed by {@code characters} generated ones
     * @throws IllegalArgumentException for an empty start, a character outside the vocabulary, or a
     *                                  non-positive count
     */
    public static String[] sample(MultiLayerNetwork net, CharacterVocabulary vocabulary, String start, int characters,
                                  int count, Random rng) {
        if (start.isEmpty()) {
            throw new IllegalArgumentException("the start text of a sample must not be empty");
        }
        if (count < 1 || characters < 0) {
            throw new IllegalArgumentException("need count >= 1 and characters >= 0, got count " + count
                    + ", characters " + characters);
        }
        int size = vocabulary.size();
        StringBuilder[] out = new StringBuilder[count];
        for (int r = 0; r < count; r++) {
            out[r] = new StringBuilder(start);
        }
        // the stored state belongs to this network object; start from none and leave none behind
        net.rnnClearPreviousState();
        try {
            INDArray first = net.rnnTimeStep(vocabulary.oneHotRows(start, count)); // [count, size, T]
            long last = first.size(2) - 1;
            float[] probabilities = new float[size];
            int[] next = new int[count];
            for (int r = 0; r < count; r++) {
                for (int c = 0; c < size; c++) {
                    probabilities[c] = first.getFloat(r, c, last);
                }
                next[r] = draw(probabilities, rng);
            }
            float[] step = new float[count * size];
            for (int i = 0; i < characters; i++) {
                Arrays.fill(step, 0f);
                for (int r = 0; r < count; r++) {
                    out[r].appendCodePoint(vocabulary.codePoint(next[r]));
                    step[r * size + next[r]] = 1f;
                }
                if (i + 1 == characters) {
                    break;
                }
                float[] y = net.rnnTimeStep(Nd4j.create(step, count, size)).toFloatVector();
                for (int r = 0; r < count; r++) {
                    System.arraycopy(y, r * size, probabilities, 0, size);
                    next[r] = draw(probabilities, rng);
                }
            }
        } finally {
            net.rnnClearPreviousState();
        }
        String[] result = new String[count];
        for (int r = 0; r < count; r++) {
            result[r] = out[r].toString();
        }
        return result;
    }

    /**
     * Draws an index with probability proportional to {@code weights} (a softmax output whose sum
     * is 1 up to float rounding; it is normalised here).
     *
     * @throws IllegalArgumentException when a weight is negative or not finite, or all are 0
     */
    public static int draw(float[] weights, Random rng) {
        double total = 0;
        for (int i = 0; i < weights.length; i++) {
            float w = weights[i];
            if (!(w >= 0) || Float.isInfinite(w)) {
                throw new IllegalArgumentException("output " + i + " of the network is " + w
                        + ": not a probability (the model diverged?)");
            }
            total += w;
        }
        if (!(total > 0)) {
            throw new IllegalArgumentException("the network's outputs sum to 0: no distribution to draw from");
        }
        double u = rng.nextDouble() * total;
        double cumulative = 0;
        int lastPositive = -1;
        for (int i = 0; i < weights.length; i++) {
            if (weights[i] > 0) {
                cumulative += weights[i];
                lastPositive = i;
                if (u < cumulative) {
                    return i;
                }
            }
        }
        return lastPositive; // u within rounding of the total
    }
}
