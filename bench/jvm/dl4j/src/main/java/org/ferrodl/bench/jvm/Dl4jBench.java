package org.ferrodl.bench.jvm;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.deeplearning4j.nn.conf.BackpropType;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.GravesLSTM;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.RmsProp;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * Deeplearning4j side of the JVM benchmark: the same two networks as {@code FerrodlBench}, trained
 * with {@code MultiLayerNetwork.fit(DataSet)} under the same {@link Harness} protocol, with DL4J's
 * defaults (workspaces enabled, float data type) and OMP_NUM_THREADS set by run.sh to the core
 * count.
 */
public final class Dl4jBench {
    public static final String SYSTEM = "dl4j";

    private Dl4jBench() {
    }

    /** MLP 784-500-100-10: ReLU, softmax + MCXENT, Adam 1e-3, ReLU (He) weight init. */
    static MultiLayerConfiguration mlp(long seed) {
        return new NeuralNetConfiguration.Builder()
                .seed(seed).updater(new Adam(1e-3)).weightInit(WeightInit.RELU)
                .list()
                .layer(new DenseLayer.Builder().nIn(Mnist.PIXELS).nOut(500).activation(Activation.RELU).build())
                .layer(new DenseLayer.Builder().nIn(500).nOut(100).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(100).nOut(Mnist.CLASSES)
                        .activation(Activation.SOFTMAX).build())
                .build();
    }

    /** LeNet-style CNN, layer for layer the configuration of {@code FerrodlBench.cnn}. */
    static MultiLayerConfiguration cnn(long seed) {
        return new NeuralNetConfiguration.Builder()
                .seed(seed).updater(new Adam(1e-3)).weightInit(WeightInit.XAVIER)
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
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(Mnist.CLASSES)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(Mnist.SIDE, Mnist.SIDE, 1))
                .build();
    }

    /** The character model, layer for layer the configuration of {@code FerrodlBench.charModel}. */
    static MultiLayerConfiguration charModel(Options o) {
        boolean graves = o.model.equals("graves");
        return new NeuralNetConfiguration.Builder()
                .seed(o.seed).updater(new RmsProp(0.1)).l2(0.001).weightInit(WeightInit.XAVIER)
                .list()
                .layer(graves
                        ? new GravesLSTM.Builder().nIn(o.vocab).nOut(o.hidden).activation(Activation.TANH).build()
                        : new LSTM.Builder().nIn(o.vocab).nOut(o.hidden).activation(Activation.TANH).build())
                .layer(graves
                        ? new GravesLSTM.Builder().nIn(o.hidden).nOut(o.hidden).activation(Activation.TANH).build()
                        : new LSTM.Builder().nIn(o.hidden).nOut(o.hidden).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX)
                        .nIn(o.hidden).nOut(o.vocab).build())
                .backpropType(BackpropType.TruncatedBPTT).tBPTTForwardLength(o.tbptt).tBPTTBackwardLength(o.tbptt)
                .build();
    }

    static List<DataSet> dataSets(Mnist.Batches b) {
        List<DataSet> out = new ArrayList<>(b.size());
        for (int i = 0; i < b.size(); i++) {
            int rows = b.rows(i);
            out.add(new DataSet(Nd4j.create(b.features[i], rows, Mnist.PIXELS),
                    Nd4j.create(b.labels[i], rows, Mnist.CLASSES)));
        }
        return out;
    }

    /** The version of the deeplearning4j-nn jar on the classpath. */
    static String dl4jVersion() {
        try (InputStream in = Dl4jBench.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/org.deeplearning4j/deeplearning4j-nn/pom.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    static String environmentJson() {
        Properties env = Nd4j.getExecutioner().getEnvironmentInformation();
        Map<String, String> sorted = new TreeMap<>();
        env.forEach((k, v) -> sorted.put(String.valueOf(k), String.valueOf(v)));
        Json j = new Json();
        sorted.forEach(j::put);
        return j.toString();
    }

    /**
     * Latency of one matrix product of the MLP's first-layer shape, [64 x 784] x [784 x 500], through
     * ND4J (OpenBLAS), each of 50 products timed on its own after 5 untimed ones. Diagnostic only: it
     * shows how the OpenMP settings change the cost of one small operation, which a training step
     * performs dozens of.
     */
    static void probe(Options o) {
        INDArray a = Nd4j.rand(64, Mnist.PIXELS);
        INDArray w = Nd4j.rand(Mnist.PIXELS, 500);
        for (int i = 0; i < 5; i++) {
            a.mmul(w);
        }
        List<Double> t = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            long s = System.nanoTime();
            a.mmul(w);
            t.add((System.nanoTime() - s) / 1e3);
        }
        Json.of("probe").put("system", SYSTEM).put("model", o.model).put("rep", o.rep)
                .put("mmul_64x784x500_us_median", Harness.median(t))
                .put("mmul_64x784x500_us_min", java.util.Collections.min(t))
                .put("mmul_64x784x500_us_max", java.util.Collections.max(t)).emit();
    }

    public static void main(String[] args) throws IOException {
        Options o = Options.parse(args);
        if (o.model.equals("graves") || o.model.equals("lstm")) {
            recurrent(o);
            return;
        }
        Mnist.Batches train = Mnist.load(o.data, "train").batches(o.batch, o.seed, true);
        Mnist.Batches test = Mnist.load(o.data, "test").batches(500, -1, false);
        MultiLayerConfiguration conf;
        switch (o.model) {
            case "mlp":
                conf = mlp(o.seed);
                break;
            case "cnn":
                conf = cnn(o.seed);
                break;
            default:
                throw new IllegalArgumentException("unknown --model " + o.model + " (DL4J: mlp, cnn, graves or lstm)");
        }
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        Harness.info(SYSTEM, o).put("dl4j_version", dl4jVersion())
                .put("nd4j_backend", Nd4j.getBackend().getClass().getName())
                .put("nd4j_data_type", String.valueOf(Nd4j.dataType()))
                .put("workspace_mode", String.valueOf(conf.getTrainingWorkspaceMode()))
                .putRaw("nd4j_environment", environmentJson())
                .put("num_params", net.numParams()).emit();
        probe(o);
        List<DataSet> trainSets = dataSets(train);
        List<DataSet> testSets = dataSets(test);
        Harness.run(SYSTEM, o, train, test, new Harness.Trainer() {
            @Override
            public void fit(int i) {
                net.fit(trainSets.get(i));
            }

            @Override
            public float[] output(int i) {
                return net.output(testSets.get(i).getFeatures(), false).dup('c').data().asFloat();
            }

            @Override
            public double score() {
                return net.score();
            }

            @Override
            public float[] updaterState() {
                INDArray state = net.getUpdater().getStateViewArray();
                return state == null ? null : state.dup('c').data().asFloat();
            }
        });
    }
    /** The LSTM rows: {@link #charModel} on {@link CharData}, examples = characters. */
    static void recurrent(Options o) {
        CharData train = CharData.generate(o.batches, o.batch, o.vocab, o.seqLength, o.seed);
        CharData test = CharData.generate(1, o.batch, o.vocab, o.seqLength, o.seed + 1_000_000L);
        long[] shape = {o.batch, o.vocab, o.seqLength};
        List<DataSet> sets = new ArrayList<>();
        for (int i = 0; i < train.size(); i++) {
            sets.add(new DataSet(Nd4j.create(train.features[i], shape, 'c'), Nd4j.create(train.labels[i], shape, 'c')));
        }
        INDArray testFeatures = Nd4j.create(test.features[0], shape, 'c');
        MultiLayerConfiguration conf = charModel(o);
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        Harness.info(SYSTEM, o).put("dl4j_version", dl4jVersion())
                .put("nd4j_backend", Nd4j.getBackend().getClass().getName())
                .put("nd4j_data_type", String.valueOf(Nd4j.dataType()))
                .put("workspace_mode", String.valueOf(conf.getTrainingWorkspaceMode()))
                .putRaw("nd4j_environment", environmentJson())
                .put("num_params", net.numParams()).emit();
        Harness.Trainer t = new Harness.Trainer() {
            @Override
            public void fit(int i) {
                net.fit(sets.get(i));
            }

            @Override
            public float[] output(int i) {
                return net.output(testFeatures, false).dup('c').data().asFloat();
            }

            @Override
            public double score() {
                return net.score();
            }

            @Override
            public float[] updaterState() {
                INDArray state = net.getUpdater().getStateViewArray();
                return state == null ? null : state.dup('c').data().asFloat();
            }
        };
        Harness.run(SYSTEM, o, train.size(), i -> train.characters(), t, () -> test.accuracy(0, t.output(0)));
    }
}
