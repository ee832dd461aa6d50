package org.ferrodl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExampleOptionsTest {

    @Test
    void defaults() throws Exception {
        ExampleOptions o = ExampleOptions.parse();
        assertNull(o.master);
        assertNull(o.dataDir);
        assertEquals(ExampleOptions.DEFAULT_EPOCHS, o.epochs);
        assertEquals(ExampleOptions.DEFAULT_BATCH_SIZE, o.batchSize);
        assertEquals(0, o.workers);
        assertEquals("paramavg", o.trainingMaster);
        assertFalse(o.help);
    }

    @Test
    void parsesEveryOption(@TempDir Path dir) throws Exception {
        ExampleOptions o = ExampleOptions.parse("--master", "local[2]", "--data-dir", dir.toString(),
                "--epochs=3", "--batch-size", "16", "--workers", "4", "--averaging-frequency", "2",
                "--learning-rate", "0.005", "--seed=-7", "--training-master", "PARAMAVG");
        assertEquals("local[2]", o.master);
        assertEquals(dir, o.dataDir);
        assertEquals(3, o.epochs);
        assertEquals(16, o.batchSize);
        assertEquals(4, o.workers);
        assertEquals(2, o.averagingFrequency);
        assertEquals(0.005, o.learningRate);
        assertEquals(-7L, o.seed);
        assertEquals("paramavg", o.trainingMaster);
        assertTrue(ExampleOptions.parse("--help").help);
    }

    /** --save-data writes the minibatches as DataSet files that --train-dir trains from (fit(String)). */
    @Test
    void savedDataRoundTripsThroughTheDirectoryOptions(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        ExampleOptions o = ExampleOptions.parse("--save-data", dir.toUri().toString(), "--train-dir", "hdfs://nn/x");
        assertEquals(dir.toUri().toString(), o.saveData);
        assertEquals("hdfs://nn/x", o.trainDir);
        assertEquals(null, ExampleOptions.parse().trainDir, "default: train from the in-memory digits");
        assertTrue(usageError("--train-dir", " ").contains("--train-dir"));

        java.util.List<org.ferrodl.linalg.dataset.DataSet> batches = java.util.List.of(
                new org.ferrodl.linalg.dataset.DataSet(org.ferrodl.linalg.factory.Nd4j.create(new float[] {1, 2}, 1, 2),
                        org.ferrodl.linalg.factory.Nd4j.create(new float[] {0, 1}, 1, 2)),
                new org.ferrodl.linalg.dataset.DataSet(org.ferrodl.linalg.factory.Nd4j.create(new float[] {3, 4}, 1, 2),
                        org.ferrodl.linalg.factory.Nd4j.create(new float[] {1, 0}, 1, 2)));
        java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
        MnistMlpExample.saveData(batches, dir.resolve("saved").toString(), new java.io.PrintStream(text, true));
        assertTrue(text.toString().startsWith("SAVED 2 DataSet files to "), text.toString());
        org.ferrodl.linalg.dataset.DataSet back = new org.ferrodl.linalg.dataset.DataSet();
        back.load(dir.resolve("saved").resolve("mnist-train-00001.bin").toFile());
        assertEquals(batches.get(1), back);
    }

    @Test
    void gradientSharingOptionsParse() throws Exception {
        ExampleOptions o = ExampleOptions.parse("--training-master", "SHARED", "--sparsity-target", "0.001");
        assertEquals("shared", o.trainingMaster);
        assertEquals(0.001, o.sparsityTarget);
        assertEquals(0.0, ExampleOptions.parse().sparsityTarget, "default: the adaptive threshold algorithm");
    }

    @Test
    void updaterDecayAndThresholdOptionsParse() throws Exception {
        ExampleOptions d = ExampleOptions.parse();
        assertEquals("adam", d.updater);
        assertEquals(1.0, d.lrDecay, "default: a constant learning rate");
        assertEquals(ExampleOptions.DEFAULT_INITIAL_THRESHOLD, d.initialThreshold);
        // the configuration the real-cluster shared scenario runs
        ExampleOptions o = ExampleOptions.parse("--updater", " Nesterovs ", "--lr-decay=0.9",
                "--initial-threshold", "1e-2", "--sparsity-target", "2.5e-3");
        assertEquals("nesterovs", o.updater);
        assertEquals(0.9, o.lrDecay);
        assertEquals(1e-2, o.initialThreshold);
        assertEquals(2.5e-3, o.sparsityTarget);
        assertEquals(1.0, ExampleOptions.parse("--lr-decay", "1").lrDecay, "1 is allowed: no decay");
    }

    @Test
    void badUpdaterDecayAndThresholdValuesAreNamed() {
        String u = usageError("--updater", "adagrad");
        assertTrue(u.contains("--updater: unknown value 'adagrad'") && u.contains("valid: adam, nesterovs"), u);
        assertTrue(usageError("--lr-decay", "0").contains("--lr-decay must be in (0, 1]"));
        assertTrue(usageError("--lr-decay", "1.5").contains("--lr-decay must be in (0, 1]"));
        assertTrue(usageError("--lr-decay", "x").contains("--lr-decay"));
        assertTrue(usageError("--initial-threshold", "0").contains("--initial-threshold"));
        assertTrue(usageError("--initial-threshold", "-1e-3").contains("--initial-threshold"));
    }

    private static String usageError(String... args) {
        return assertThrows(ExampleOptions.UsageException.class, () -> ExampleOptions.parse(args)).getMessage();
    }

    @Test
    void badValuesGiveOneLineMessages() {
        assertTrue(usageError("--epochs", "0").contains("--epochs must be a positive integer"));
        assertTrue(usageError("--batch-size", "x").contains("'x'"));
        assertTrue(usageError("--learning-rate", "NaN").contains("--learning-rate"));
        assertTrue(usageError("--learning-rate", "-1").contains("--learning-rate"));
        assertTrue(usageError("--seed", "1.5").contains("--seed"));
        assertTrue(usageError("--workers").contains("needs a value"));
        assertTrue(usageError("--frobnicate", "1").contains("unknown option '--frobnicate'"));
        assertTrue(usageError("stray").contains("unexpected argument"));
        assertTrue(usageError("--data-dir", "/nonexistent/dir/for/sure").contains("not a directory"));
        String tm = usageError("--training-master", "gossip");
        assertTrue(tm.contains("valid: paramavg, shared"), tm);
        assertTrue(usageError("--sparsity-target", "1.5").contains("--sparsity-target must be in [0, 1]"));
        assertTrue(usageError("--sparsity-target", "x").contains("--sparsity-target must be a number"));
        for (String m : new String[] {tm, usageError("--epochs", "-3")}) {
            assertFalse(m.contains("\n"), m);
        }
    }

    @Test
    void logLevelIsOptionalAndNamedLikeSparks() throws Exception {
        assertNull(ExampleOptions.parse().logLevel, "default: WARN unless spark.log.level is set");
        assertEquals("INFO", ExampleOptions.parse("--log-level", "info").logLevel);
        assertEquals("DEBUG", ExampleOptions.parse("--log-level=Debug").logLevel);
        String m = usageError("--log-level", "loud");
        assertTrue(m.startsWith("--log-level: unknown value 'loud'") && m.contains("WARN"), m);
    }

    @Test
    void sparkConsoleStaysAtWarnUnlessAskedForMore() throws Exception {
        assertEquals("WARN", MnistMlpExample.sparkConf(ExampleOptions.parse()).get("spark.log.level"));
        assertEquals("INFO", MnistMlpExample.sparkConf(ExampleOptions.parse("--log-level", "info"))
                .get("spark.log.level"));
        System.setProperty("spark.log.level", "ERROR"); // as spark-submit --conf spark.log.level=ERROR
        try {
            assertEquals("ERROR", MnistMlpExample.sparkConf(ExampleOptions.parse()).get("spark.log.level"));
            assertEquals("DEBUG", MnistMlpExample.sparkConf(ExampleOptions.parse("--log-level=debug"))
                    .get("spark.log.level"), "the command line wins");
        } finally {
            System.clearProperty("spark.log.level");
        }
    }

    @Test
    void lastOccurrenceWinsAndOptionLikeValuesAreRejectedByName() throws Exception {
        assertEquals(4, ExampleOptions.parse("--epochs", "2", "--epochs", "4").epochs);
        // a value that is another option is a missing value, not the next option's value
        String m = usageError("--epochs", "--workers", "2");
        assertTrue(m.contains("--epochs"), m);
        assertFalse(m.contains("\n"), m);
    }

    @Test
    void helpIsGeneratedFromTheOptionsWithTheirDefaults() {
        String help = ExampleOptions.usage();
        for (String option : new String[] {"--master=URL", "--data-dir=DIR", "--epochs=N", "--batch-size=N",
                "--workers=N", "--averaging-frequency=N", "--updater=NAME", "--learning-rate=X", "--lr-decay=X",
                "--seed=N", "--sparsity-target=X", "--initial-threshold=X", "--training-master=NAME",
                "--log-level=LEVEL", "-h, --help"}) {
            assertTrue(help.contains(option), option + " missing from:\n" + help);
        }
        assertTrue(help.contains("training epochs (default " + ExampleOptions.DEFAULT_EPOCHS + ")"), help);
        assertTrue(help.contains("(default " + ExampleOptions.DEFAULT_SEED + ")"), help);
        assertTrue(help.contains("Exit status: 0 success, 2 bad command line"), help);
        assertTrue(help.startsWith("Usage: spark-submit [spark options]"), help);
    }

    @Test
    void remainingTimeIsShort() {
        assertEquals("0s", MnistMlpExample.duration(0.2));
        assertEquals("45s", MnistMlpExample.duration(45.4));
        assertEquals("3m07s", MnistMlpExample.duration(187));
        assertEquals("1h02m", MnistMlpExample.duration(3725));
    }

    @Test
    void runExitsWithTwoOnBadArgumentsAndZeroOnHelp() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        assertEquals(2, MnistMlpExample.run(new String[] {"--epochs", "zero"}, o, e));
        String msg = err.toString(StandardCharsets.UTF_8);
        assertTrue(msg.startsWith("MnistMlpExample: error: --epochs"), msg);
        assertEquals(1, msg.strip().lines().count(), msg);
        assertEquals(0, MnistMlpExample.run(new String[] {"--help"}, o, e));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("--training-master"));
    }
}
