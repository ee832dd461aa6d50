package org.ferrodl.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.MergeVertex;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;

/**
 * A {@code ComputationGraph} trained on the MNIST digits with {@code SparkComputationGraph}: the
 * image feeds a wide branch (dense 128) and a deep one (dense 64 → dense 64), merged
 * ({@code MergeVertex}) into a softmax over the 10 digits. Each epoch's minibatches are
 * MultiDataSets ({@code fitMultiDataSet}); the test set is evaluated on Spark ({@code evaluateMDS}).
 * Takes MnistMlpExample's options (except {@code --save-data}/{@code --train-dir}) and prints the same
 * {@code epoch}/{@code FINAL test_accuracy=} lines; the real-cluster test's {@code graph} scenario
 * submits it with {@code spark-submit --class org.ferrodl.examples.MnistGraphExample}.
 */
public final class MnistGraphExample {
    private MnistGraphExample() {
    }

    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /** Everything main does, with the exit status returned instead of exiting. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        ExampleOptions opts;
        try {
            opts = ExampleOptions.parse(args);
            if (opts.saveData != null || opts.trainDir != null) {
                throw new ExampleOptions.UsageException("--save-data and --train-dir belong to MnistMlpExample; "
                        + "MnistGraphExample trains from an RDD of MultiDataSets");
            }
        } catch (ExampleOptions.UsageException e) {
            err.println("MnistGraphExample: error: " + e.getMessage());
            return MnistMlpExample.EXIT_USAGE;
        }
        if (opts.help) {
            out.println(ExampleOptions.usage());
            return 0;
        }
        try {
            train(opts, out);
            return 0;
        } catch (IOException e) {
            err.println("MnistGraphExample: error: " + e.getMessage());
            return MnistMlpExample.EXIT_FAILURE;
        } catch (RuntimeException e) {
            err.println("MnistGraphExample: error: " + e);
            e.printStackTrace(err);
            return MnistMlpExample.EXIT_FAILURE;
        }
    }

    /** image (784) → wide (128) and deep1 (64) → deep2 (64); merge (192) → out (softmax 10). */
    static ComputationGraphConfiguration graphConfiguration(double learningRate, long seed) {
        return new NeuralNetConfiguration.Builder().seed(seed).updater(new Adam(learningRate))
                .weightInit(WeightInit.RELU).l2(MnistMlpExample.L2)
                .graphBuilder()
                .addInputs("image")
                .addLayer("wide", new DenseLayer.Builder().nIn(MnistData.PIXELS).nOut(128)
                        .activation(Activation.RELU).build(), "image")
                .addLayer("deep1", new DenseLayer.Builder().nIn(MnistData.PIXELS).nOut(64)
                        .activation(Activation.RELU).build(), "image")
                .addLayer("deep2", new DenseLayer.Builder().nIn(64).nOut(64).activation(Activation.RELU).build(),
                        "deep1")
                .addVertex("merge", new MergeVertex(), "wide", "deep2")
                .addLayer("out", new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(192)
                        .nOut(MnistData.NUM_CLASSES).activation(Activation.SOFTMAX).build(), "merge")
                .setOutputs("out")
                .build();
    }

    private static List<MultiDataSet> multi(List<DataSet> batches) {
        return batches.stream().map(MultiDataSet::fromDataSet).toList();
    }

    static void train(ExampleOptions opts, PrintStream out) throws IOException {
        MnistData train = MnistData.load(opts.dataDir, "train");
        MnistData test = MnistData.load(opts.dataDir, "test");
        SparkConf conf = MnistMlpExample.sparkConf(opts);
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            if (opts.logLevel == null && "WARN".equals(conf.get("spark.log.level"))) {
                // minibatches are parallelized from the driver: Spark's "task of very large size"
                // warnings would only bury the epoch lines (as in MnistMlpExample)
                org.apache.logging.log4j.core.config.Configurator.setLevel(
                        "org.apache.spark.scheduler.TaskSetManager", org.apache.logging.log4j.Level.ERROR);
            }
            int workers = opts.workers > 0 ? opts.workers : Math.max(1, sc.defaultParallelism());
            out.printf(Locale.ROOT, "ferrodl MNIST graph (image -> wide 128 | deep 64-64 -> merge -> softmax 10): "
                            + "master=%s workers=%d batch-size=%d averaging-frequency=%d epochs=%d learning-rate=%s "
                            + "seed=%d training-master=%s train=%d test=%d%n",
                    sc.master(), workers, opts.batchSize, opts.averagingFrequency, opts.epochs, opts.learningRate,
                    opts.seed, opts.trainingMaster, train.count, test.count);
            TrainingMaster<?, ?> tm = MnistMlpExample.trainingMaster(opts, workers);
            SparkComputationGraph graph = new SparkComputationGraph(sc,
                    graphConfiguration(opts.learningRate, opts.seed), tm);
            long t0 = System.nanoTime();
            // distributed once and kept in the executors' memory, every epoch fits it (as in
            // MnistMlpExample)
            JavaRDD<MultiDataSet> trainRdd = sc.parallelize(multi(train.toDataSets(opts.batchSize,
                    train.shuffledOrder(opts.seed))), workers).persist(StorageLevel.MEMORY_ONLY());
            for (int epoch = 1; epoch <= opts.epochs; epoch++) {
                long e0 = System.nanoTime();
                graph.fitMultiDataSet(trainRdd);
                double secs = (System.nanoTime() - e0) / 1e9;
                out.printf(Locale.ROOT, "epoch %d/%d score=%.5f examples/s=%.0f seconds=%.2f%n", epoch, opts.epochs,
                        graph.getScore(), train.count / secs, secs);
                out.flush();
            }
            Evaluation eval = graph.evaluateMDS(sc.parallelize(multi(test.toDataSets(1000, null)), workers));
            out.printf(Locale.ROOT, "FINAL test_accuracy=%.4f train_examples=%d epochs=%d seconds=%.1f%n",
                    eval.accuracy(), train.count, opts.epochs, (System.nanoTime() - t0) / 1e9);
            out.flush();
        }
    }
}
