package org.ferrodl.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.RmsProp;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.nn.conf.BackpropType;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.GravesLSTM;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;

/**
 * The reference's character model on Spark: a language model that reads a text one character at a
 * time and predicts the next, 2 × {@link GravesLSTM} (200 units, tanh) and an {@link RnnOutputLayer}
 * (softmax + MCXENT), RmsProp, l2, truncated BPTT of 50 steps, trained with
 * {@link SparkDl4jMultiLayer} and {@link ParameterAveragingTrainingMaster}. The text is cut into
 * sequences of 1,000 characters on the driver; the executors turn them into one-hot DataSets with
 * the broadcast {@link CharacterVocabulary} (the reference's workflow: parallelize the strings,
 * broadcast the character map, map each string to a DataSet). After each epoch it reports the loss
 * per character on text held out from the end and prints texts sampled with
 * {@code rnnTimeStep} ({@link CharacterSampler}).
 *
 * <p>Run it with {@code make example-lstm} (an embedded {@code local[*]} Spark) or
 * {@code spark-submit --class org.ferrodl.examples.CharacterLstmExample ferrodl-spark-example-<v>.jar};
 * {@code --help} lists the options ({@link CharacterLstmOptions}).
 */
public final class CharacterLstmExample {
    static final int EXIT_USAGE = 2;
    static final int EXIT_FAILURE = 1;
    /** the text inside the jar (see text/README.md there) */
    static final String TEXT_RESOURCE = "text/persuasion.txt";
    /** sequences per minibatch when scoring the held-out text */
    static final int SCORE_BATCH = 8;

    private CharacterLstmExample() {
    }

    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /** Everything main does, with the exit status returned instead of exiting (testable). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        CharacterLstmOptions opts;
        try {
            opts = CharacterLstmOptions.parse(args);
        } catch (ExampleOptions.UsageException e) {
            err.println("CharacterLstmExample: error: " + e.getMessage());
            return EXIT_USAGE;
        }
        if (opts.help) {
            out.println(CharacterLstmOptions.usage());
            return 0;
        }
        try {
            Corpus corpus = Corpus.of(loadText(opts.text, opts.characters), opts.validationCharacters,
                    opts.sequenceLength, opts.sampleStart);
            train(opts, corpus, out);
            return 0;
        } catch (IOException | IllegalArgumentException e) {
            err.println("CharacterLstmExample: error: " + e.getMessage());
            return EXIT_FAILURE;
        } catch (RuntimeException e) {
            err.println("CharacterLstmExample: error: " + e);
            e.printStackTrace(err);
            return EXIT_FAILURE;
        }
    }

    /** The reference's character model for a vocabulary of {@code characters}. */
    static MultiLayerConfiguration networkConfiguration(int characters, int lstmSize, int tbpttLength,
                                                        double learningRate, double l2, long seed) {
        return new NeuralNetConfiguration.Builder()
                .seed(seed)
                .updater(new RmsProp(learningRate))
                .l2(l2)
                .weightInit(WeightInit.XAVIER)
                .list()
                .layer(new GravesLSTM.Builder().nIn(characters).nOut(lstmSize).activation(Activation.TANH).build())
                .layer(new GravesLSTM.Builder().nIn(lstmSize).nOut(lstmSize).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).activation(Activation.SOFTMAX)
                        .nIn(lstmSize).nOut(characters).build())
                .backpropType(BackpropType.TruncatedBPTT)
                .tBPTTForwardLength(tbpttLength)
                .tBPTTBackwardLength(tbpttLength)
                .build();
    }

    /**
     * The training text: {@code file} (UTF-8; a malformed byte sequence is an error naming the
     * file) or the novel inside the jar, cut to its first {@code characters} characters (0: all).
     */
    static String loadText(Path file, int characters) throws IOException {
        byte[] bytes;
        String source;
        if (file == null) {
            source = "jar:" + TEXT_RESOURCE;
            try (InputStream in = CharacterLstmExample.class.getClassLoader().getResourceAsStream(TEXT_RESOURCE)) {
                if (in == null) {
                    throw new IOException(TEXT_RESOURCE + " is not on the classpath (a broken example jar?)");
                }
                bytes = in.readAllBytes();
            }
        } else {
            source = file.toString();
            bytes = Files.readAllBytes(file);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new IOException(source + " is not UTF-8 text: " + e.getMessage(), e);
        }
        if (characters > 0 && text.codePointCount(0, text.length()) > characters) {
            text = text.substring(0, text.offsetByCodePoints(0, characters));
        }
        return text;
    }

    /** The text cut for training and validation, with its vocabulary and the samples' start text. */
    static final class Corpus {
        final CharacterVocabulary vocabulary;
        final List<String> train;
        final List<String> validation;
        final int trainCharacters;
        /** characters the held-out sequences predict (their steps) */
        final long validationSteps;
        /** null: a random character per epoch */
        final String sampleStart;

        private Corpus(CharacterVocabulary vocabulary, List<String> train, List<String> validation,
                       int trainCharacters, String sampleStart) {
            this.vocabulary = vocabulary;
            this.train = train;
            this.validation = validation;
            this.trainCharacters = trainCharacters;
            this.validationSteps = validation.stream().mapToLong(s -> s.codePointCount(0, s.length()) - 1L).sum();
            this.sampleStart = sampleStart;
        }

        /**
         * Holds out the last {@code validationCharacters} characters of {@code text}; both parts are
         * cut into sequences of {@code sequenceLength} steps. The vocabulary is the whole text's.
         *
         * @throws IllegalArgumentException when either part would have nothing to predict, or the
         *                                  sample start has a character the text lacks
         */
        static Corpus of(String text, int validationCharacters, int sequenceLength, String sampleStart) {
            int total = text.codePointCount(0, text.length());
            if (validationCharacters < 2 || total - validationCharacters < 2) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "the text has %d characters: too few to "
                        + "hold out --validation-characters %d and train on at least 2 (use a longer text, more "
                        + "--characters or fewer --validation-characters)", total, validationCharacters));
            }
            int split = text.offsetByCodePoints(0, total - validationCharacters);
            CharacterVocabulary vocabulary = CharacterVocabulary.of(text);
            if (sampleStart != null && !vocabulary.covers(sampleStart)) {
                int bad = sampleStart.codePoints().filter(c -> vocabulary.indexOf(c) < 0).findFirst().getAsInt();
                throw new IllegalArgumentException("--sample-start has the character "
                        + CharacterVocabulary.describe(bad) + ", which the training text does not contain");
            }
            return new Corpus(vocabulary, CharacterVocabulary.sequences(text.substring(0, split), sequenceLength),
                    CharacterVocabulary.sequences(text.substring(split), sequenceLength),
                    total - validationCharacters, sampleStart);
        }
    }

    /** Turns a string into a one-hot training sequence on an executor (the vocabulary is broadcast). */
    static final class ToDataSet implements Function<String, DataSet> {
        private static final long serialVersionUID = 1L;
        private final Broadcast<CharacterVocabulary> vocabulary;

        ToDataSet(Broadcast<CharacterVocabulary> vocabulary) {
            this.vocabulary = vocabulary;
        }

        @Override
        public DataSet call(String s) {
            return vocabulary.value().toDataSet(s);
        }
    }

    static void train(CharacterLstmOptions opts, Corpus corpus, PrintStream out) {
        SparkConf conf = MnistMlpExample.sparkConf(opts.master, opts.logLevel, "ferrodl character LSTM example");
        // a worker's result (parameters + RmsProp state, ~4.5 MB at 2 x 200 units) then goes straight
        // back with the task instead of through the block manager (README: parameter averaging)
        conf.setIfMissing("spark.task.maxDirectResultSize", "128m");
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            int workers = opts.workers > 0 ? opts.workers : Math.max(1, sc.defaultParallelism());
            CharacterVocabulary vocabulary = corpus.vocabulary;
            out.printf(Locale.ROOT, "ferrodl character model 2 x GravesLSTM %d, TBPTT %d: master=%s workers=%d "
                            + "batch-size=%d averaging-frequency=%d epochs=%d learning-rate=%s l2=%s seed=%d "
                            + "text=%s vocabulary=%d train_characters=%d train_sequences=%d "
                            + "validation_characters=%d sequence-length=%d%n",
                    opts.lstmSize, opts.tbpttLength, sc.master(), workers, opts.batchSize, opts.averagingFrequency,
                    opts.epochs, opts.learningRate, opts.l2, opts.seed,
                    opts.text == null ? "jar:" + TEXT_RESOURCE : opts.text, vocabulary.size(), corpus.trainCharacters,
                    corpus.train.size(), corpus.validationSteps, opts.sequenceLength);

            Broadcast<CharacterVocabulary> bcVocabulary = sc.broadcast(vocabulary);
            // one RDD for every epoch: the master exports its DataSets once and deals them in a new
            // order (rngSeed + epoch) on every fit
            JavaRDD<DataSet> train = sc.parallelize(corpus.train, workers).map(new ToDataSet(bcVocabulary));
            JavaRDD<DataSet> validation = sc.parallelize(corpus.validation, workers).map(new ToDataSet(bcVocabulary));

            ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(workers, 1)
                    .batchSizePerWorker(opts.batchSize)
                    .averagingFrequency(opts.averagingFrequency)
                    .workerPrefetchNumBatches(2)
                    .rngSeed(opts.seed)
                    .build();
            SparkDl4jMultiLayer sparkNet = new SparkDl4jMultiLayer(sc, networkConfiguration(vocabulary.size(),
                    opts.lstmSize, opts.tbpttLength, opts.learningRate, opts.l2, opts.seed), tm);
            Random rng = new Random(opts.seed);

            double initialLoss = validationLoss(sparkNet, validation, corpus.validationSteps);
            out.printf(Locale.ROOT, "epoch 0/%d validation_loss=%.4f (uniform over the vocabulary: %.4f)%n",
                    opts.epochs, initialLoss, Math.log(vocabulary.size()));
            out.flush();
            double loss = initialLoss;
            long t0 = System.nanoTime();
            for (int epoch = 1; epoch <= opts.epochs; epoch++) {
                long e0 = System.nanoTime();
                sparkNet.fit(train);
                double secs = (System.nanoTime() - e0) / 1e9;
                loss = validationLoss(sparkNet, validation, corpus.validationSteps);
                double eta = (System.nanoTime() - t0) / 1e9 / epoch * (opts.epochs - epoch);
                out.printf(Locale.ROOT, "epoch %d/%d score=%.4f validation_loss=%.4f characters/s=%.0f seconds=%.1f "
                                + "eta=%s%n", epoch, opts.epochs, sparkNet.getScore(), loss,
                        corpus.trainCharacters / secs, secs, MnistMlpExample.duration(eta));
                if (opts.samples > 0) {
                    String start = corpus.sampleStart != null ? corpus.sampleStart
                            : new String(Character.toChars(vocabulary.codePoint(rng.nextInt(vocabulary.size()))));
                    String[] samples = CharacterSampler.sample(sparkNet.getNetwork(), vocabulary, start,
                            opts.sampleLength, opts.samples, rng);
                    for (int i = 0; i < samples.length; i++) {
                        out.printf(Locale.ROOT, "----- sample %d/%d after epoch %d -----%n%s%n", i + 1, samples.length,
                                epoch, samples[i]);
                    }
                }
                out.flush();
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            out.printf(Locale.ROOT, "FINAL validation_loss_initial=%.4f validation_loss=%.4f validation_characters=%d "
                            + "train_characters=%d epochs=%d seconds=%.1f%n", initialLoss, loss,
                    corpus.validationSteps, corpus.trainCharacters, opts.epochs, seconds);
            out.flush();
            tm.deleteTempFiles(sc);
        }
    }

    /**
     * Mean loss per held-out character in nats (the score of each sequence without the l2 term is
     * its summed per-step loss), computed on the executors with {@code scoreExamples}.
     */
    static double validationLoss(SparkDl4jMultiLayer sparkNet, JavaRDD<DataSet> validation, long steps) {
        return sparkNet.scoreExamples(validation, false, SCORE_BATCH).sum() / steps;
    }
}
