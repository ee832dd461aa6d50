package org.ferrodl.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.linalg.schedule.MapSchedule;
import org.ferrodl.linalg.schedule.ScheduleType;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;

/**
 * A LeNet-style CNN on the MNIST digits, trained locally (no Spark) with the native engine:
 * conv 5×5×20 → max-pool 2×2/2 → conv 5×5×50 → max-pool 2×2/2 → dense 500 ReLU → softmax 10,
 * Adam with the learning rate stepped down per epoch, the reference's LeNet layout with {@code setInputType(convolutionalFlat(28, 28, 1))}
 * inferring every nIn.
 *
 * <p>Usage: {@code java -cp <example jar> org.ferrodl.examples.LeNetMnistExample [epochs]
 * [data-dir]}; prints {@code FINAL test_accuracy=<a> ...}.
 */
public final class LeNetMnistExample {
    public static final int DEFAULT_EPOCHS = 8;
    public static final int BATCH_SIZE = 64;
    public static final long SEED = 12345L;

    private LeNetMnistExample() {
    }

    /** The network of this example. */
    public static MultiLayerConfiguration networkConfiguration(long seed) {
        return new NeuralNetConfiguration.Builder()
                .seed(seed)
                .l2(5e-4)
                .weightInit(WeightInit.XAVIER)
                // Adam with a per-epoch step-down of the learning rate (a MapSchedule)
                .updater(new Adam(new MapSchedule(ScheduleType.EPOCH, Map.of(0, 1e-3, 3, 3e-4, 5, 1e-4))))
                .list()
                .layer(new ConvolutionLayer.Builder(5, 5).nIn(1).stride(1, 1).nOut(20)
                        .activation(Activation.IDENTITY).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX)
                        .kernelSize(2, 2).stride(2, 2).build())
                .layer(new ConvolutionLayer.Builder(5, 5).stride(1, 1).nOut(50)
                        .activation(Activation.IDENTITY).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX)
                        .kernelSize(2, 2).stride(2, 2).build())
                .layer(new DenseLayer.Builder().activation(Activation.RELU).nOut(500).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.NEGATIVELOGLIKELIHOOD)
                        .nOut(MnistData.NUM_CLASSES).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(MnistData.IMAGE_SIDE, MnistData.IMAGE_SIDE, 1))
                .build();
    }

    /** Result of one run. */
    public static final class Result {
        public final double testAccuracy;
        public final double seconds;
        public final int trainExamples;

        Result(double testAccuracy, double seconds, int trainExamples) {
            this.testAccuracy = testAccuracy;
            this.seconds = seconds;
            this.trainExamples = trainExamples;
        }
    }

    /** Trains for {@code epochs} passes over the training digits and evaluates on the test digits. */
    public static Result run(int epochs, Path dataDir, PrintStream out) throws IOException {
        MnistData train = MnistData.load(dataDir, "train");
        MnistData test = MnistData.load(dataDir, "test");
        List<DataSet> testBatches = test.toDataSets(500, null);
        long t0 = System.nanoTime();
        try (MultiLayerNetwork net = new MultiLayerNetwork(networkConfiguration(SEED))) {
            net.init();
            for (int epoch = 1; epoch <= epochs; epoch++) {
                long e0 = System.nanoTime();
                for (DataSet batch : train.toDataSets(BATCH_SIZE, train.shuffledOrder(SEED + epoch))) {
                    net.fit(batch);
                }
                net.incrementEpochCount();
                Evaluation eval = evaluate(net, testBatches);
                out.printf(Locale.ROOT, "epoch %d: test_accuracy=%.4f seconds=%.1f%n", epoch, eval.accuracy(),
                        (System.nanoTime() - e0) / 1e9);
            }
            double accuracy = evaluate(net, testBatches).accuracy();
            double seconds = (System.nanoTime() - t0) / 1e9;
            out.printf(Locale.ROOT, "FINAL test_accuracy=%.4f train_examples=%d epochs=%d seconds=%.1f%n",
                    accuracy, train.count, epochs, seconds);
            return new Result(accuracy, seconds, train.count);
        }
    }

    private static Evaluation evaluate(MultiLayerNetwork net, List<DataSet> batches) {
        Evaluation eval = new Evaluation(MnistData.NUM_CLASSES);
        for (DataSet b : batches) {
            eval.eval(b.getLabels(), net.output(b.getFeatures(), false));
        }
        return eval;
    }

    public static void main(String[] args) throws IOException {
        int epochs = args.length > 0 ? Integer.parseInt(args[0]) : DEFAULT_EPOCHS;
        Path dataDir = args.length > 1 ? Paths.get(args[1]) : null;
        run(epochs, dataDir, System.out);
    }
}
