package org.ferrodl.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.junit.jupiter.api.Test;

/** The character model's data: vocabulary, one-hot sequences shifted by one, cutting, padding masks. */
class CharacterVocabularyTest {

    @Test
    void vocabularyIsTheDistinctCharactersInCodePointOrder() {
        CharacterVocabulary v = CharacterVocabulary.of("banana\nbandana");
        assertEquals(5, v.size());
        int[] expected = {'\n', 'a', 'b', 'd', 'n'};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], v.codePoint(i));
            assertEquals(i, v.indexOf(expected[i]));
        }
        assertEquals(-1, v.indexOf('z'));
        assertTrue(v.covers("band\n"));
        assertFalse(v.covers("bandz"));
        assertThrows(IndexOutOfBoundsException.class, () -> v.codePoint(5));
        assertThrows(IllegalArgumentException.class, () -> CharacterVocabulary.of(""));
        // a character outside the BMP (two UTF-16 units) is one character, one unit
        CharacterVocabulary emoji = CharacterVocabulary.of("a\uD83D\uDE00a");
        assertEquals(2, emoji.size());
        assertEquals(0x1F600, emoji.codePoint(1));
        assertArrayEquals(new int[] {0, 1, 0}, emoji.indices("a\uD83D\uDE00a"));
    }

    @Test
    void aSequenceIsOneHotFeaturesAndTheNextCharacterAsLabels() {
        CharacterVocabulary v = CharacterVocabulary.of("abcd");
        String s = "abcadb";
        DataSet d = v.toDataSet(s);
        int steps = s.length() - 1;
        assertArrayEquals(new long[] {1, 4, steps}, d.getFeatures().shape());
        assertArrayEquals(new long[] {1, 4, steps}, d.getLabels().shape());
        assertNull(d.getFeaturesMaskArray());
        assertNull(d.getLabelsMaskArray());
        for (int t = 0; t < steps; t++) {
            assertEquals(v.indexOf(s.charAt(t)), hot(d.getFeatures(), 0, t), "features at step " + t);
            assertEquals(v.indexOf(s.charAt(t + 1)), hot(d.getLabels(), 0, t), "labels at step " + t);
            if (t + 1 < steps) {
                assertEquals(hot(d.getLabels(), 0, t), hot(d.getFeatures(), 0, t + 1),
                        "the label of step t is the input of step t+1");
            }
        }
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> v.toDataSet("abxd"));
        assertTrue(unknown.getMessage().contains("'x'") && unknown.getMessage().contains("position 2"),
                unknown.getMessage());
        IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class, () -> v.toDataSet("a"));
        assertTrue(tooShort.getMessage().contains("at least 2 characters"), tooShort.getMessage());
    }

    @Test
    void sequencesCoverEveryTransitionOnceAndTheLastOneIsShorter() {
        String text = "0123456789";
        assertEquals(List.of("01234", "45678", "89"), CharacterVocabulary.sequences(text, 4));
        // a last piece of a single character has nothing to predict
        assertEquals(List.of("01234", "45678"), CharacterVocabulary.sequences("012345678", 4));
        assertEquals(List.of("0123456789"), CharacterVocabulary.sequences(text, 9));
        assertEquals(List.of("0123456789"), CharacterVocabulary.sequences(text, 50));
        assertEquals(List.of(), CharacterVocabulary.sequences("0", 4));
        // every character after the first is a label exactly once
        for (int length = 1; length <= 12; length++) {
            int steps = 0;
            StringBuilder labels = new StringBuilder();
            for (String s : CharacterVocabulary.sequences(text, length)) {
                steps += s.length() - 1;
                labels.append(s, 1, s.length());
            }
            assertEquals(text.length() - 1, steps, "length " + length);
            assertEquals(text.substring(1), labels.toString(), "length " + length);
        }
        assertThrows(IllegalArgumentException.class, () -> CharacterVocabulary.sequences(text, 0));
    }

    /** Workers merge one-sequence DataSets into minibatches: the short last sequence gets a mask. */
    @Test
    void theShortLastSequenceIsPaddedAndMaskedInAMinibatch() {
        String text = "abcabcabcab";
        CharacterVocabulary v = CharacterVocabulary.of(text);
        List<String> seqs = CharacterVocabulary.sequences(text, 4);
        assertEquals(List.of("abcab", "bcabc", "cab"), seqs);
        DataSet batch = DataSet.merge(seqs.stream().map(v::toDataSet).toList());
        assertArrayEquals(new long[] {3, 3, 4}, batch.getFeatures().shape());
        INDArray fm = batch.getFeaturesMaskArray();
        INDArray lm = batch.getLabelsMaskArray();
        float[][] expectedMask = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 0, 0}};
        for (int n = 0; n < 3; n++) {
            for (int t = 0; t < 4; t++) {
                assertEquals(expectedMask[n][t], fm.getFloat(n, t), "features mask " + n + "," + t);
                assertEquals(expectedMask[n][t], lm.getFloat(n, t), "labels mask " + n + "," + t);
            }
        }
        // the padded steps hold no character
        for (int t = 2; t < 4; t++) {
            assertEquals(-1, hot(batch.getFeatures(), 2, t));
            assertEquals(-1, hot(batch.getLabels(), 2, t));
        }
        assertEquals(v.indexOf('b'), hot(batch.getLabels(), 2, 1), "'cab': the label of step 1 is 'b'");
    }

    @Test
    void oneHotRowsRepeatTheStartTextInEveryRow() {
        CharacterVocabulary v = CharacterVocabulary.of("xyz");
        INDArray a = v.oneHotRows("zx", 3);
        assertArrayEquals(new long[] {3, 3, 2}, a.shape());
        for (int r = 0; r < 3; r++) {
            assertEquals(2, hot(a, r, 0));
            assertEquals(0, hot(a, r, 1));
        }
    }

    /** The class of step t of example n in a one-hot [N, C, T] array; -1 when the step is all zeros. */
    static int hot(INDArray a, int n, int t) {
        int found = -1;
        for (int c = 0; c < a.size(1); c++) {
            float x = a.getFloat(n, c, t);
            if (x == 1f) {
                assertEquals(-1, found, "two ones at example " + n + " step " + t);
                found = c;
            } else {
                assertEquals(0f, x, "not one-hot at example " + n + " step " + t);
            }
        }
        return found;
    }
}
