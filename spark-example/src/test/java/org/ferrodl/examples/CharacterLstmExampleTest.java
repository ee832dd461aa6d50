package org.ferrodl.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.RmsProp;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.nn.conf.BackpropType;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.GravesLSTM;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The character model example: options, text, held-out split, sampling, and a small Spark run. */
class CharacterLstmExampleTest {

    @Test
    void defaultsAreTheReferenceConfiguration() throws Exception {
        CharacterLstmOptions o = CharacterLstmOptions.parse();
        assertEquals(200, o.lstmSize);
        assertEquals(50, o.tbpttLength);
        assertEquals(1000, o.sequenceLength);
        assertEquals(8, o.batchSize);
        assertEquals(3, o.averagingFrequency);
        assertEquals(0.002, o.learningRate, "ours: the reference's 0.1 overshoots (CharacterLstmOptions)");
        assertEquals(0.001, o.l2);
        assertEquals(4, o.samples);
        assertEquals(300, o.sampleLength);
        assertNull(o.text);
        assertNull(o.master);
        assertEquals(0, o.characters, "default: the whole text");

        MultiLayerConfiguration conf = CharacterLstmExample.networkConfiguration(77, o.lstmSize, o.tbpttLength,
                CharacterLstmOptions.REFERENCE_LEARNING_RATE, o.l2, o.seed);
        assertEquals(BackpropType.TruncatedBPTT, conf.getBackpropType());
        assertEquals(50, conf.getTbpttFwdLength());
        assertEquals(50, conf.getTbpttBackLength());
        for (int i = 0; i < 3; i++) {
            BaseLayer layer = (BaseLayer) conf.getConf(i).getLayer();
            assertEquals(i < 2 ? GravesLSTM.class : RnnOutputLayer.class, layer.getClass());
            assertEquals(i < 2 ? 200L : 77L, ((FeedForwardLayer) layer).getNOut());
            assertEquals(i < 2 ? Activation.TANH : Activation.SOFTMAX, layer.getActivation());
            assertEquals(WeightInit.XAVIER, layer.getWeightInit());
            assertEquals(0.001, layer.getL2());
            RmsProp rmsProp = (RmsProp) layer.getIUpdater();
            assertEquals(0.1, rmsProp.getLearningRate());
            assertEquals(0.95, rmsProp.getRmsDecay());
        }
        assertEquals(LossFunctions.LossFunction.MCXENT, ((RnnOutputLayer) conf.getConf(2).getLayer()).getLossFunction());
    }

    @Test
    void badCommandLinesNameTheOption(@TempDir Path dir) throws Exception {
        assertEquals(5, CharacterLstmOptions.parse("--epochs", "5", "--characters=1000").epochs);
        for (String[] args : new String[][] {{"--epochs", "0"}, {"--characters", "-1"}, {"--lstm-size", "x"},
                {"--l2", "-0.1"}, {"--samples", "-1"}, {"--text", dir.resolve("missing.txt").toString()},
                {"--text", dir.toString()}, {"--sample-start", " "}, {"--bogus"}}) {
            ExampleOptions.UsageException e = assertThrows(ExampleOptions.UsageException.class,
                    () -> CharacterLstmOptions.parse(args));
            assertTrue(e.getMessage().contains(args[0]), e.getMessage());
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(CharacterLstmExample.EXIT_USAGE, CharacterLstmExample.run(new String[] {"--epochs", "0"},
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true)));
        assertTrue(err.toString().startsWith("CharacterLstmExample: error: --epochs"), err.toString());
        ByteArrayOutputStream help = new ByteArrayOutputStream();
        assertEquals(0, CharacterLstmExample.run(new String[] {"--help"}, new PrintStream(help, true),
                new PrintStream(new ByteArrayOutputStream())));
        assertTrue(help.toString().contains("--validation-characters"), help.toString());
    }

    @Test
    void theJarCarriesTheNovelAndTextsAreCutByCharacters(@TempDir Path dir) throws IOException {
        String novel = CharacterLstmExample.loadText(null, 0);
        assertEquals(466_854, novel.length());
        assertTrue(novel.startsWith("Persuasion\n"), novel.substring(0, 20));
        assertEquals(75, CharacterVocabulary.of(novel).size());
        assertEquals(novel.substring(0, 1000), CharacterLstmExample.loadText(null, 1000));

        Path utf8 = dir.resolve("t.txt");
        Files.writeString(utf8, "na\u00efve \uD83D\uDE00 caf\u00e9", StandardCharsets.UTF_8);
        assertEquals("na\u00efve \uD83D\uDE00", CharacterLstmExample.loadText(utf8, 7), "7 code points");
        Path latin1 = dir.resolve("latin1.txt");
        Files.write(latin1, new byte[] {'c', 'a', 'f', (byte) 0xE9});
        IOException e = assertThrows(IOException.class, () -> CharacterLstmExample.loadText(latin1, 0));
        assertTrue(e.getMessage().contains(latin1.toString()) && e.getMessage().contains("UTF-8"), e.getMessage());
    }

    @Test
    void theLastCharactersAreHeldOut() {
        String text = "abcdefghijklmnopqrstuvwxyz";
        CharacterLstmExample.Corpus c = CharacterLstmExample.Corpus.of(text, 6, 5, null);
        assertEquals(20, c.trainCharacters);
        assertEquals(java.util.List.of("abcdef", "fghijk", "klmnop", "pqrst"), c.train);
        assertEquals(java.util.List.of("uvwxyz"), c.validation);
        assertEquals(5, c.validationSteps);
        assertEquals(26, c.vocabulary.size(), "the vocabulary covers the held-out text too");
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> CharacterLstmExample.Corpus.of(text, 25, 5, null));
        assertTrue(small.getMessage().contains("--validation-characters 25"), small.getMessage());
        IllegalArgumentException start = assertThrows(IllegalArgumentException.class,
                () -> CharacterLstmExample.Corpus.of(text, 6, 5, "The"));
        assertTrue(start.getMessage().contains("'T'"), start.getMessage());
    }

    @Test
    void drawFollowsTheDistribution() {
        Random rng = new Random(1);
        assertEquals(2, CharacterSampler.draw(new float[] {0, 0, 1, 0}, rng));
        float[] p = {0.2f, 0.5f, 0f, 0.3f};
        int[] counts = new int[4];
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            counts[CharacterSampler.draw(p, rng)]++;
        }
        assertEquals(0, counts[2], "a zero-probability character is never drawn");
        for (int i = 0; i < 4; i++) {
            // 4 standard deviations of a binomial frequency at n = 20,000 are at most 0.0142
            assertEquals(p[i], counts[i] / (double) n, 0.0142, "frequency of " + i);
        }
        assertThrows(IllegalArgumentException.class, () -> CharacterSampler.draw(new float[] {0.5f, Float.NaN}, rng));
        assertThrows(IllegalArgumentException.class, () -> CharacterSampler.draw(new float[] {0.5f, -0.1f}, rng));
        assertThrows(IllegalArgumentException.class, () -> CharacterSampler.draw(new float[] {0f, 0f}, rng));
    }

    /**
     * Trained locally on a repeated phrase, the model continues it: the samples (rnnTimeStep, one
     * step at a time) hold only vocabulary characters and reproduce the phrase.
     */
    @Test
    void aTrainedModelContinuesItsTextThroughRnnTimeStep() {
        String phrase = "the cat sat. ";
        String text = phrase.repeat(40);
        CharacterVocabulary v = CharacterVocabulary.of(text);
        MultiLayerConfiguration conf = CharacterLstmExample.networkConfiguration(v.size(), 32, 13, 0.01, 0.0, 7);
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            net.init();
            String[] untrained = CharacterSampler.sample(net, v, "th", 40, 3, new Random(3));
            for (String s : untrained) {
                assertEquals(42, s.length());
                assertTrue(s.startsWith("th") && v.covers(s), s);
            }
            DataSet batch = DataSet.merge(CharacterVocabulary.sequences(text, 52).stream().map(v::toDataSet).toList());
            double before = net.score(batch);
            for (int epoch = 0; epoch < 40; epoch++) {
                net.fit(batch);
            }
            double after = net.score(batch);
            assertTrue(after < before / 10, "score " + before + " -> " + after);
            String[] samples = CharacterSampler.sample(net, v, "the c", 3 * phrase.length(), 3, new Random(5));
            for (String s : samples) {
                assertEquals(phrase.repeat(4).substring(0, 5 + 3 * phrase.length()), s);
            }
            // sampling leaves no state behind in the network
            assertArrayEquals(CharacterSampler.sample(net, v, "the c", 10, 1, new Random(9)),
                    CharacterSampler.sample(net, v, "the c", 10, 1, new Random(9)));
            assertThrows(IllegalArgumentException.class, () -> CharacterSampler.sample(net, v, "", 5, 1, new Random()));
            assertThrows(IllegalArgumentException.class,
                    () -> CharacterSampler.sample(net, v, "dog", 5, 1, new Random()));
        }
    }

    /** The whole example on local[2] Spark with a small model: held-out loss falls, FINAL line parses. */
    @Test
    void runsOnLocalSparkAndTheHeldOutLossFalls() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = CharacterLstmExample.run(new String[] {"--master", "local[2]", "--characters", "12000",
                "--validation-characters", "2000", "--sequence-length", "200", "--lstm-size", "32",
                "--learning-rate", "0.01", "--epochs", "2", "--samples", "2", "--sample-length", "50",
                "--sample-start", "Anne"}, new PrintStream(out, true), new PrintStream(err, true));
        String text = out.toString();
        System.out.print(text); // the example's own report, in the test log
        assertEquals(0, status, text + err);
        Matcher m = Pattern.compile("FINAL validation_loss_initial=([0-9.]+) validation_loss=([0-9.]+) "
                + "validation_characters=1999 train_characters=10000 epochs=2 seconds=").matcher(text);
        assertTrue(m.find(), text);
        double initial = Double.parseDouble(m.group(1));
        double last = Double.parseDouble(m.group(2));
        assertEquals(Math.log(CharacterVocabulary.of(CharacterLstmExample.loadText(null, 12000)).size()), initial,
                0.1, "an untrained model is about uniform over the vocabulary");
        assertTrue(last < initial - 0.5, "held-out loss " + initial + " -> " + last + "\n" + text);
        assertEquals(4, text.split("----- sample ", -1).length - 1, text);
        assertTrue(text.contains("epoch 2/2 score="), text);
    }
}
