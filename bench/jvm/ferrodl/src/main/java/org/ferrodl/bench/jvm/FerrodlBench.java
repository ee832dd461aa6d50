package org.ferrodl.bench.jvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.jni.NativeNetwork;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.RmsProp;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.BackpropType;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.ElementWiseVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.GravesLSTM;
import org.ferrodl.nn.conf.layers.LSTM;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;

/**
 * ferrodl side of the JVM benchmark: the MLP and the LeNet-style CNN trained through the public
 * Java API ({@code MultiLayerNetwork.fit(DataSet)}, JNI copies included) under the protocol of
 * {@link Harness}; the small residual CNN ({@code rescnn}) the same way through
 * {@code ComputationGraph.fit(DataSet)}; and the {@code jni} mode, which splits the MLP step into the engine's work and
 * what the Java/JNI boundary adds (see {@link #jni}).
 */
public final class FerrodlBench {
    public static final String SYSTEM = "ferrodl";

    private FerrodlBench() {
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

    /**
     * LeNet-style CNN: conv 5x5x20 identity, max-pool 2/2, conv 5x5x50 identity, max-pool 2/2,
     * dense 500 ReLU, softmax 10 + MCXENT; Adam 1e-3, Xavier init; nIn inferred from
     * convolutionalFlat(28, 28, 1).
     */
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

    /**
     * Small residual CNN, the graph row (same architecture as bench/python/peers.py
     * {@code rescnn_logits}): conv 3x3x16 same ReLU, max-pool 2/2, two residual blocks [conv 3x3x16
     * same ReLU, conv 3x3x16 same identity, ElementWiseVertex Add with the block input, ReLU],
     * max-pool 2/2, softmax 10 + MCXENT; Adam 1e-3, Xavier init.
     */
    static ComputationGraphConfiguration rescnn(long seed) {
        ComputationGraphConfiguration.GraphBuilder b = new NeuralNetConfiguration.Builder()
                .seed(seed).updater(new Adam(1e-3)).weightInit(WeightInit.XAVIER)
                .convolutionMode(ConvolutionMode.Same)
                .graphBuilder()
                .addInputs("image")
                .setInputTypes(InputType.convolutionalFlat(Mnist.SIDE, Mnist.SIDE, 1))
                .addLayer("stem", new ConvolutionLayer.Builder(3, 3).nOut(16).activation(Activation.RELU).build(),
                        "image")
                .addLayer("pool1", new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX)
                        .kernelSize(2, 2).stride(2, 2).build(), "stem");
        String in = "pool1";
        for (int k = 1; k <= 2; k++) {
            String p = "block" + k;
            b.addLayer(p + "_conv1", new ConvolutionLayer.Builder(3, 3).nOut(16).activation(Activation.RELU).build(),
                            in)
                    .addLayer(p + "_conv2", new ConvolutionLayer.Builder(3, 3).nOut(16)
                            .activation(Activation.IDENTITY).build(), p + "_conv1")
                    .addVertex(p + "_add", new ElementWiseVertex(ElementWiseVertex.Op.Add), in, p + "_conv2")
                    .addLayer(p + "_relu", new ActivationLayer.Builder().activation(Activation.RELU).build(),
                            p + "_add");
            in = p + "_relu";
        }
        return b.addLayer("pool2", new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX)
                        .kernelSize(2, 2).stride(2, 2).build(), in)
                .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(Mnist.CLASSES)
                        .activation(Activation.SOFTMAX).build(), "pool2")
                .setOutputs("out")
                .build();
    }

    /**
     * The reference's character model (issue 12, seeds 004): two recurrent layers of
     * {@code hidden} units (tanh; {@code graves}: GravesLSTM, with peepholes, as the reference;
     * {@code lstm}: LSTM, without), RnnOutputLayer softmax + MCXENT over the vocabulary, RmsProp
     * 0.1 (decay 0.95, epsilon 1e-8), l2 0.001, Xavier, truncated BPTT of {@code tbptt} steps
     * forward and backward. Layer for layer the configuration of {@code Dl4jBench.charModel}.
     */
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

    /** The LSTM rows: {@link #charModel} on {@link CharData}, examples = characters. */
    static void recurrent(Options o) {
        CharData train = CharData.generate(o.batches, o.batch, o.vocab, o.seqLength, o.seed);
        CharData test = CharData.generate(1, o.batch, o.vocab, o.seqLength, o.seed + 1_000_000L);
        long[] shape = {o.batch, o.vocab, o.seqLength};
        List<DataSet> sets = new ArrayList<>();
        for (int i = 0; i < train.size(); i++) {
            sets.add(new DataSet(Nd4j.create(train.features[i], shape), Nd4j.create(train.labels[i], shape)));
        }
        INDArray testFeatures = Nd4j.create(test.features[0], shape);
        try (MultiLayerNetwork net = new MultiLayerNetwork(charModel(o))) {
            net.init();
            Harness.info(SYSTEM, o).putRaw("ferrodl_build", NativeInfo.buildInfo())
                    .put("engine_threads", NativeInfo.numThreads()).put("num_params", net.numParams()).emit();
            Harness.Trainer t = new Harness.Trainer() {
                @Override
                public void fit(int i) {
                    net.fit(sets.get(i));
                }

                @Override
                public float[] output(int i) {
                    return NDArray.internalData(net.output(testFeatures, false));
                }

                @Override
                public double score() {
                    return net.score();
                }

                @Override
                public float[] updaterState() {
                    return NDArray.internalData(net.getUpdaterState());
                }
            };
            Harness.run(SYSTEM, o, train.size(), i -> train.characters(), t, () -> test.accuracy(0, t.output(0)));
        }
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

    public static void main(String[] args) throws IOException {
        Options o = Options.parse(args);
        if (o.model.equals("graves") || o.model.equals("lstm")) {
            recurrent(o);
            return;
        }
        Mnist.Batches train = Mnist.load(o.data, "train").batches(o.batch, o.seed, true);
        Mnist.Batches test = Mnist.load(o.data, "test").batches(500, -1, false);
        if (o.model.equals("rescnn")) {
            graph(o, train, test);
            return;
        }
        MultiLayerConfiguration conf;
        switch (o.model) {
            case "mlp":
            case "jni":
                conf = mlp(o.seed);
                break;
            case "cnn":
                conf = cnn(o.seed);
                break;
            default:
                throw new IllegalArgumentException("unknown --model " + o.model);
        }
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            net.init();
            Harness.info(SYSTEM, o).putRaw("ferrodl_build", NativeInfo.buildInfo())
                    .put("engine_threads", NativeInfo.numThreads()).put("num_params", net.numParams()).emit();
            List<DataSet> trainSets = dataSets(train);
            List<DataSet> testSets = dataSets(test);
            if (o.model.equals("jni")) {
                jni(o, conf, net, train, trainSets);
                return;
            }
            Harness.run(SYSTEM, o, train, test, new Harness.Trainer() {
                @Override
                public void fit(int i) {
                    net.fit(trainSets.get(i));
                }

                @Override
                public float[] output(int i) {
                    return NDArray.internalData(net.output(testSets.get(i).getFeatures(), false));
                }

                @Override
                public double score() {
                    return net.score();
                }

                @Override
                public float[] updaterState() {
                    return NDArray.internalData(net.getUpdaterState());
                }
            });
        }
    }

    /** The graph row: {@link #rescnn} through {@code ComputationGraph}, under the same harness. */
    static void graph(Options o, Mnist.Batches train, Mnist.Batches test) {
        try (ComputationGraph net = new ComputationGraph(rescnn(o.seed))) {
            net.init();
            Harness.info(SYSTEM, o).putRaw("ferrodl_build", NativeInfo.buildInfo())
                    .put("engine_threads", NativeInfo.numThreads()).put("num_params", net.numParams()).emit();
            List<DataSet> trainSets = dataSets(train);
            List<DataSet> testSets = dataSets(test);
            Harness.run(SYSTEM, o, train, test, new Harness.Trainer() {
                @Override
                public void fit(int i) {
                    net.fit(trainSets.get(i));
                }

                @Override
                public float[] output(int i) {
                    return NDArray.internalData(net.outputSingle(testSets.get(i).getFeatures()));
                }

                @Override
                public double score() {
                    return net.score();
                }

                @Override
                public float[] updaterState() {
                    return NDArray.internalData(net.getUpdaterState());
                }
            });
        }
    }

    /** The six orders of three steps; the step loop cycles through them. */
    private static final int[][] ORDERS = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};

    /**
     * Splits one MLP training step into the engine's work and what the Java API and JNI boundary
     * add, all measured in this JVM, round after round (one round = one pass over the batches):
     * <ul>
     *   <li>{@code api}: {@code MultiLayerNetwork.fit(DataSet)} (the public path);
     *       {@code raw}: {@code NativeNetwork.fit(handle, float[]...)} on a native network of the
     *       same configuration, fed the very arrays inside the DataSet, without the Java wrapper;
     *       {@code twin}: a second {@code MultiLayerNetwork} like {@code api}. For every batch the
     *       three step once each, in an order that cycles through all six, each step timed on its
     *       own. The median of the per-batch differences {@code api - raw} is the wrapper's cost
     *       (DataSet unpacking, checks, listener dispatch); {@code api - twin} is the same
     *       estimator on two identical paths, the method's null result (it should be ~0).</li>
     *   <li>{@code call}: {@code NativeNetwork.numParams(handle)}: one JNI transition with the
     *       boundary guard and the handle registry lookup, which every native call pays.</li>
     *   <li>{@code copy}: {@code NativeNetwork.fit} on a destroyed handle minus
     *       {@code numParams} on the same destroyed handle. The native side copies the features and
     *       labels into Rust vectors before it looks the handle up, and both calls then throw the
     *       same exception, so the difference is the batch copy of a real fit.</li>
     *   <li>{@code wrapper}: {@code MultiLayerNetwork.fit(DataSet)} on a network whose native handle
     *       was destroyed behind its back (found by reflection; measurement only) minus
     *       {@code NativeNetwork.fit} on a destroyed handle with the same arrays: both copy the
     *       batch and throw the same exception, so the difference is the Java work before the
     *       native call (the listener loop after it, skipped here, is an empty-list check).</li>
     * </ul>
     * JNI + copy overhead per step = wrapper + call + copy, as a fraction of the median
     * {@code api} step; the step-level difference {@code api - raw} is its end-to-end cross-check,
     * with {@code api - twin} giving that cross-check's resolution.
     */
    static void jni(Options o, MultiLayerConfiguration conf, MultiLayerNetwork net, Mnist.Batches train,
            List<DataSet> sets) {
        int nb = train.size();
        int fCols = Mnist.PIXELS;
        int lCols = Mnist.CLASSES;
        float[][] f = new float[nb][];
        float[][] l = new float[nb][];
        for (int i = 0; i < nb; i++) {
            f[i] = NDArray.internalData(sets.get(i).getFeatures());
            l[i] = NDArray.internalData(sets.get(i).getLabels());
        }
        long raw = NativeNetwork.create(conf.toJson());
        long dead = NativeNetwork.create(conf.toJson());
        NativeNetwork.destroy(dead);
        MultiLayerNetwork victim = new MultiLayerNetwork(conf);
        victim.init();
        Object victimState = handleState(victim);
        NativeNetwork.destroy(handleOf(victimState));
        try (MultiLayerNetwork twin = new MultiLayerNetwork(conf)) {
            twin.init();
            for (int i = 0; i < nb; i++) { // warm-up epoch for the three networks
                net.fit(sets.get(i));
                twin.fit(sets.get(i));
                NativeNetwork.fit(raw, f[i], train.rows(i), fCols, l[i], lCols, null, 0, null, 0);
            }
            String deadMessage = null;
            try {
                NativeNetwork.fit(dead, f[0], train.rows(0), fCols, l[0], lCols, null, 0, null, 0);
            } catch (RuntimeException e) {
                deadMessage = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            Json.of("jni_setup").put("system", SYSTEM).put("rep", o.rep)
                    .put("dead_handle_fit_throws", String.valueOf(deadMessage)).emit();
            int callReps = 200_000;
            int deadReps = 2_000;
            long sink = 0;
            List<Double> api = new ArrayList<>();
            List<Double> rawSteps = new ArrayList<>();
            List<Double> wrapperDiffs = new ArrayList<>();
            List<Double> nullDiffs = new ArrayList<>();
            List<Double> calls = new ArrayList<>();
            List<Double> copies = new ArrayList<>();
            List<Double> wrappers = new ArrayList<>();
            double[] t = new double[3];
            for (int round = 0; round < o.rounds; round++) {
                int from = api.size();
                for (int k = 0; k < nb; k++) {
                    for (int which : ORDERS[(round * nb + k) % ORDERS.length]) {
                        long s = System.nanoTime();
                        if (which == 0) {
                            net.fit(sets.get(k));
                        } else if (which == 1) {
                            NativeNetwork.fit(raw, f[k], train.rows(k), fCols, l[k], lCols, null, 0, null, 0);
                        } else {
                            twin.fit(sets.get(k));
                        }
                        t[which] = (System.nanoTime() - s) / 1e9;
                    }
                    api.add(t[0]);
                    rawSteps.add(t[1]);
                    wrapperDiffs.add(t[0] - t[1]);
                    nullDiffs.add(t[0] - t[2]);
                }
                long s = System.nanoTime();
                for (int k = 0; k < callReps; k++) {
                    sink += NativeNetwork.numParams(raw);
                }
                double call = (System.nanoTime() - s) / 1e9 / callReps;
                // 0: raw fit on the dead handle, 1: numParams on it, 2: API fit of the victim
                double[] dd = new double[3];
                for (int which : ORDERS[round % ORDERS.length]) {
                    s = System.nanoTime();
                    for (int k = 0; k < deadReps; k++) {
                        int b = k % nb;
                        try {
                            if (which == 0) {
                                NativeNetwork.fit(dead, f[b], train.rows(b), fCols, l[b], lCols, null, 0, null, 0);
                            } else if (which == 1) {
                                sink += NativeNetwork.numParams(dead);
                            } else {
                                victim.fit(sets.get(b));
                            }
                        } catch (RuntimeException e) {
                            sink++;
                        }
                    }
                    dd[which] = (System.nanoTime() - s) / 1e9 / deadReps;
                }
                double deadFit = dd[0];
                double deadCall = dd[1];
                calls.add(call);
                copies.add(deadFit - deadCall);
                wrappers.add(dd[2] - deadFit);
                double apiMed = Harness.median(api.subList(from, api.size()));
                Json.of("jni").put("system", SYSTEM).put("model", "mlp").put("batch", o.batch).put("rep", o.rep)
                        .put("round", round).put("steps", nb)
                        .put("api_fit_us", apiMed * 1e6)
                        .put("raw_fit_us", Harness.median(rawSteps.subList(from, rawSteps.size())) * 1e6)
                        .put("step_diff_us", Harness.median(wrapperDiffs.subList(from, wrapperDiffs.size())) * 1e6)
                        .put("step_null_us", Harness.median(nullDiffs.subList(from, nullDiffs.size())) * 1e6)
                        .put("call_us", call * 1e6).put("dead_fit_us", deadFit * 1e6)
                        .put("dead_call_us", deadCall * 1e6).put("copy_us", (deadFit - deadCall) * 1e6)
                        .put("dead_api_fit_us", dd[2] * 1e6).put("wrapper_us", (dd[2] - deadFit) * 1e6)
                        .put("copy_bytes", 4L * (f[0].length + l[0].length)).put("sink", sink % 7).emit();
            }
            double apiMed = Harness.median(api);
            double wrapper = Harness.median(wrappers);
            double[] wci = medianCi95(wrapperDiffs);
            double[] nci = medianCi95(nullDiffs);
            double call = Harness.median(calls);
            double copy = Harness.median(copies);
            double overhead = wrapper + call + copy;
            Json.of("jni_run").put("system", SYSTEM).put("model", "mlp").put("batch", o.batch).put("rep", o.rep)
                    .put("rounds", o.rounds).put("pairs", wrapperDiffs.size())
                    .put("api_fit_us", apiMed * 1e6).put("raw_fit_us", Harness.median(rawSteps) * 1e6)
                    .put("step_diff_us", Harness.median(wrapperDiffs) * 1e6)
                    .put("step_diff_ci95_lo_us", wci[0] * 1e6).put("step_diff_ci95_hi_us", wci[1] * 1e6)
                    .put("step_null_us", Harness.median(nullDiffs) * 1e6)
                    .put("step_null_ci95_lo_us", nci[0] * 1e6).put("step_null_ci95_hi_us", nci[1] * 1e6)
                    .put("wrapper_us", wrapper * 1e6).put("call_us", call * 1e6).put("copy_us", copy * 1e6)
                    .put("copy_bytes", 4L * (f[0].length + l[0].length))
                    .put("overhead_us", overhead * 1e6).put("overhead_fraction", overhead / apiMed)
                    .put("boundary_fraction", (call + copy) / apiMed).emit();
        } finally {
            NativeNetwork.destroy(raw);
            setHandle(victimState, 0L); // already destroyed: nothing left for close() to free
            victim.close();
        }
    }

    // The victim network's native handle, reached by reflection (measurement only, not an API).
    private static Object handleState(MultiLayerNetwork net) {
        try {
            // the handle lives in NativeHandleOwner, MultiLayerNetwork's superclass
            java.lang.reflect.Field f = org.ferrodl.nn.api.NativeHandleOwner.class.getDeclaredField("state");
            f.setAccessible(true);
            return f.get(net);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("MultiLayerNetwork internals changed: " + e, e);
        }
    }

    private static java.lang.reflect.Field handleField(Object state) throws ReflectiveOperationException {
        java.lang.reflect.Field f = state.getClass().getDeclaredField("handle");
        f.setAccessible(true);
        return f;
    }

    private static long handleOf(Object state) {
        try {
            return handleField(state).getLong(state);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("MultiLayerNetwork internals changed: " + e, e);
        }
    }

    private static void setHandle(Object state, long h) {
        try {
            handleField(state).setLong(state, h);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("MultiLayerNetwork internals changed: " + e, e);
        }
    }

    /** A 95% interval for the median from order statistics: ranks n/2 -+ 1.96 sqrt(n)/2. */
    static double[] medianCi95(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        java.util.Collections.sort(s);
        int n = s.size();
        int half = (int) Math.ceil(1.96 * Math.sqrt(n) / 2);
        return new double[] {s.get(Math.max(0, n / 2 - half)), s.get(Math.min(n - 1, n / 2 + half))};
    }
}
