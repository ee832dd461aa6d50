package org.ferrodl.nn.graph;

import java.io.File;
import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.jni.NativeGraph;
import org.ferrodl.jni.NativeLoader;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.MultiDataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.linalg.dataset.api.iterator.MultiDataSetIterator;
import org.ferrodl.nn.api.Layer;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.nn.api.RecurrentArrays;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.graph.GraphVertex;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.layers.RnnLossLayer;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.gradient.Gradient;
import org.ferrodl.nn.info.LayerView;
import org.ferrodl.nn.info.NetworkInfo;
import org.ferrodl.nn.info.NetworkInfo.GraphPort;
import org.ferrodl.nn.info.NetworkInfo.LayerEntry;
import org.ferrodl.nn.info.NetworkInfo.ParamEntry;
import org.ferrodl.nn.info.SummaryTable;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.util.ModelSerializer;

/**
 * A network of named vertices (layers, merges, element-wise operations, ...) with any number of
 * inputs and outputs, trained by the native engine; the reference's
 * {@code org.deeplearning4j.nn.graph.ComputationGraph}.
 *
 * <pre>{@code
 * ComputationGraphConfiguration conf = new NeuralNetConfiguration.Builder().updater(new Adam(1e-3))
 *     .graphBuilder()
 *     .addInputs("in")
 *     .addLayer("dense", new DenseLayer.Builder().nIn(784).nOut(100).build(), "in")
 *     .addLayer("out", new OutputLayer.Builder().nOut(10).activation(Activation.SOFTMAX).build(), "dense")
 *     .setOutputs("out")
 *     .build();
 * try (ComputationGraph net = new ComputationGraph(conf)) {
 *     net.init();
 *     net.fit(trainIterator, 5);
 *     Evaluation eval = net.evaluate(testIterator);
 * }
 * }</pre>
 *
 * <p>Arrays: each network input takes one array per call, in {@code networkInputs} order, with the
 * examples along axis 0 and the rest in C order ({@code [N, 784]} or {@code [N, 1, 28, 28]} alike);
 * each output gives {@code [N, nOut]}. A {@link DataSet} feeds a graph with one input and one
 * output. Masks: a {@link MultiDataSet}'s features masks go to the inputs and its labels masks to
 * the outputs, in order. Wrong widths, counts or values are {@link DL4JInvalidInputException}s from
 * the engine naming the input or output.
 *
 * <p>Parameters are keyed {@code "<vertex>_<param>"} ({@code dense_W}, {@code dense_b}) in the
 * layout order of {@link #params()}.
 *
 * <p>Lifecycle as {@link org.ferrodl.nn.multilayer.MultiLayerNetwork}: {@link #init()} creates the
 * native graph, {@link #close()} releases it (idempotent; afterwards every call throws
 * {@link NativeStateException} "network is closed"). {@link #save(File, boolean)} and
 * {@link #load(File, boolean)} use {@link ModelSerializer}; Java serialization writes the
 * configuration, parameters, updater state, counters and score. Listeners are neither serialized
 * nor cloned.
 *
 * <p><b>Not thread-safe.</b> Use one graph per thread (see {@link #clone()}).
 */
public class ComputationGraph extends NativeHandleOwner implements Model, Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    private transient ComputationGraphConfiguration conf;
    private transient double score = Double.NaN;
    private transient List<TrainingListener> listeners;
    private transient int lastBatchSize;
    private transient long lastEtlTimeMs;
    /** Vertex and parameter descriptions from the engine; fixed for the life of a handle. */
    private transient NetworkInfo info;
    /** Examples of the stored rnnTimeStep state (0: none stored). */
    private transient int rnnStateRows;

    /**
     * Creates an uninitialized graph; call {@link #init()} before use.
     *
     * @param configuration the configuration (copied)
     */
    public ComputationGraph(ComputationGraphConfiguration configuration) {
        this.conf = Objects.requireNonNull(configuration, "configuration").clone();
    }

    /**
     * Creates the native graph and initializes its parameters from the configuration's seed. Does
     * nothing when already initialized.
     */
    public void init() {
        ensureOpen();
        if (hasHandle()) {
            return;
        }
        NativeLoader.load();
        adoptHandle(NativeGraph.create(conf.toJson()), NativeGraph::destroy);
        long h = handle();
        NativeGraph.setCounters(h, conf.getIterationCount(), conf.getEpochCount());
    }

    /**
     * Initializes, then sets the parameters.
     *
     * @param parameters flat parameter vector of length {@link #numParams()}, or null for seeded init
     * @param cloneParametersArray ignored: parameters are always copied into the native graph
     */
    public void init(INDArray parameters, boolean cloneParametersArray) {
        ensureOpen();
        if (parameters != null && !hasHandle()) {
            // built with these parameters: no seeded weight draw for them to replace
            NativeLoader.load();
            adoptHandle(NativeGraph.createWithParams(conf.toJson(), NDArray.internalData(parameters)),
                    NativeGraph::destroy);
            NativeGraph.setCounters(handle(), conf.getIterationCount(), conf.getEpochCount());
            return;
        }
        init();
        if (parameters != null) {
            setParams(parameters);
        }
    }

    // ---- arrays across JNI -----------------------------------------------------------------------

    /** One call's arrays as the native methods take them. */
    private static final class Arrays2 {
        final float[][] data;
        final float[][] masks;
        final int[] maskCols;

        Arrays2(float[][] data, float[][] masks, int[] maskCols) {
            this.data = data;
            this.masks = masks;
            this.maskCols = maskCols;
        }
    }

    private static String nameAt(List<String> names, int k) {
        return k < names.size() ? "\"" + names.get(k) + "\"" : "#" + k;
    }

    /** The examples of a call: axis 0 of the first array; every array must agree. */
    private static int rowsOf(INDArray[] arrays, List<String> names, String what) {
        int rows = -1;
        String first = null;
        for (int k = 0; k < arrays.length; k++) {
            INDArray a = arrays[k];
            if (a == null) {
                continue; // the engine names a missing array
            }
            if (a.rank() < 2) {
                throw new DL4JInvalidInputException(what + " for " + nameAt(names, k) + " must have the examples "
                        + "along axis 0 and at least one more axis, got shape " + Arrays.toString(a.shape()));
            }
            int r = Math.toIntExact(a.size(0));
            if (rows < 0) {
                rows = r;
                first = nameAt(names, k);
            } else if (r != rows) {
                throw new DL4JInvalidInputException(what + " for " + nameAt(names, k) + " have " + r
                        + " examples but those for " + first + " have " + rows);
            }
        }
        return Math.max(rows, 0);
    }

    private static float[][] data(INDArray[] arrays) {
        float[][] out = new float[arrays.length][];
        for (int k = 0; k < arrays.length; k++) {
            out[k] = arrays[k] == null ? null : NDArray.internalData(arrays[k]);
        }
        return out;
    }

    /** Masks as (arrays, column counts), or both null when there is no mask at all. */
    private static Arrays2 withMasks(float[][] data, INDArray[] masks) {
        return withMasks(data, masks, false);
    }

    /** @param labels whether these are labels masks (which may be per output: {@code [N, nOut, T]}) */
    private static Arrays2 withMasks(float[][] data, INDArray[] masks, boolean labels) {
        if (masks == null || Arrays.stream(masks).allMatch(Objects::isNull)) {
            return new Arrays2(data, null, null);
        }
        float[][] m = new float[masks.length][];
        int[] cols = new int[masks.length];
        for (int k = 0; k < masks.length; k++) {
            INDArray a = masks[k];
            if (a != null) {
                m[k] = NDArray.internalData(a);
                cols[k] = labels ? RecurrentArrays.labelsMaskCols(a) : RecurrentArrays.maskCols(a, "features mask " + k);
            }
        }
        return new Arrays2(data, m, cols);
    }

    /** Features, labels and masks of one call. */
    private final class Batch {
        final int rows;
        final Arrays2 in;
        final Arrays2 out;

        Batch(MultiDataSet d) {
            if (d == null) {
                throw new DL4JInvalidInputException("the MultiDataSet must not be null");
            }
            INDArray[] f = d.getFeatures();
            INDArray[] l = d.getLabels();
            if (f == null || l == null) {
                throw new DL4JInvalidInputException("the MultiDataSet has no " + (f == null ? "features" : "labels"));
            }
            rows = rowsOf(f, conf.getNetworkInputs(), "features");
            int lRows = rowsOf(l, conf.getNetworkOutputs(), "labels");
            if (lRows != rows && Arrays.stream(l).anyMatch(Objects::nonNull)) {
                throw new DL4JInvalidInputException("labels have " + lRows + " examples but features have " + rows);
            }
            in = withMasks(data(f), d.getFeaturesMaskArrays());
            out = withMasks(data(l), d.getLabelsMaskArrays(), true);
        }
    }

    private static MultiDataSet multi(DataSet d) {
        if (d == null) {
            throw new DL4JInvalidInputException("the DataSet must not be null");
        }
        return org.ferrodl.linalg.dataset.MultiDataSet.fromDataSet(d);
    }

    // ---- training --------------------------------------------------------------------------------

    /**
     * One training iteration on a graph with one input and one output.
     *
     * @param data features, labels and optional masks
     * @see #fit(MultiDataSet)
     */
    public void fit(DataSet data) {
        fit(multi(data));
    }

    /**
     * One training iteration (the iteration counter grows by one), then
     * {@link TrainingListener#iterationDone} on every listener.
     *
     * @param data one features array per network input, one labels array per output, optional
     *     masks (features masks per input, labels masks per output; null entries for none)
     * @throws DL4JInvalidInputException for wrong counts, widths or rows, or NaN/infinite values
     */
    public void fit(MultiDataSet data) {
        fitBatch(data, 0);
    }

    /**
     * @param inputs one features array per network input
     * @param labels one labels array per network output
     * @see #fit(MultiDataSet)
     */
    public void fit(INDArray[] inputs, INDArray[] labels) {
        fit(new org.ferrodl.linalg.dataset.MultiDataSet(inputs, labels));
    }

    /**
     * @param inputs one features array per network input
     * @param labels one labels array per network output
     * @param featureMaskArrays one mask per input (null entries for none), or null
     * @param labelMaskArrays one mask per output (null entries for none), or null
     * @see #fit(MultiDataSet)
     */
    public void fit(INDArray[] inputs, INDArray[] labels, INDArray[] featureMaskArrays, INDArray[] labelMaskArrays) {
        fit(new org.ferrodl.linalg.dataset.MultiDataSet(inputs, labels, featureMaskArrays, labelMaskArrays));
    }

    private void fitBatch(MultiDataSet data, long etlTimeMs) {
        long h = handle();
        Batch b = new Batch(data);
        score = NativeGraph.fit(h, b.in.data, b.out.data, b.rows, b.in.masks, b.in.maskCols, b.out.masks,
                b.out.maskCols);
        lastBatchSize = b.rows;
        lastEtlTimeMs = etlTimeMs;
        List<TrainingListener> ls = listeners();
        if (!ls.isEmpty()) {
            long[] c = counters();
            int iteration = Math.toIntExact(c[0] - 1);
            int epoch = Math.toIntExact(c[1]);
            for (TrainingListener l : new ArrayList<>(ls)) {
                l.iterationDone(this, iteration, epoch);
            }
        }
    }

    /** Where {@link #fitEpoch} takes its minibatches from. */
    private interface Source {
        boolean hasNext();

        MultiDataSet next();
    }

    /**
     * One epoch over a {@link DataSetIterator} (a graph with one input and one output); as
     * {@link #fit(MultiDataSetIterator)}.
     *
     * @param iterator the data
     */
    public void fit(DataSetIterator iterator) {
        handle();
        Objects.requireNonNull(iterator, "iterator");
        if (!iterator.hasNext() && iterator.resetSupported()) {
            iterator.reset();
        }
        fitEpoch(new Source() {
            @Override
            public boolean hasNext() {
                return iterator.hasNext();
            }

            @Override
            public MultiDataSet next() {
                return multi(iterator.next());
            }
        });
    }

    /**
     * One epoch: fits every minibatch of the iterator (resetting it first when it is exhausted and
     * resettable), then increments the epoch counter. Listeners get
     * {@link TrainingListener#onEpochStart} before the first minibatch,
     * {@link TrainingListener#iterationDone} after each, and {@link TrainingListener#onEpochEnd}
     * after the last (before the epoch counter is incremented). The time spent in
     * {@code iterator.next()} is available as {@link #getLastEtlTime()}.
     *
     * @param iterator the data
     */
    public void fit(MultiDataSetIterator iterator) {
        handle();
        Objects.requireNonNull(iterator, "iterator");
        if (!iterator.hasNext() && iterator.resetSupported()) {
            iterator.reset();
        }
        fitEpoch(new Source() {
            @Override
            public boolean hasNext() {
                return iterator.hasNext();
            }

            @Override
            public MultiDataSet next() {
                return iterator.next();
            }
        });
    }

    private void fitEpoch(Source source) {
        for (TrainingListener l : new ArrayList<>(listeners())) {
            l.onEpochStart(this);
        }
        while (source.hasNext()) {
            long t0 = System.nanoTime();
            MultiDataSet next = source.next();
            long etl = (System.nanoTime() - t0) / 1_000_000L;
            fitBatch(next, etl);
        }
        for (TrainingListener l : new ArrayList<>(listeners())) {
            l.onEpochEnd(this);
        }
        incrementEpochCount();
    }

    /**
     * {@code numEpochs} epochs, each as {@link #fit(DataSetIterator)}; the iterator is reset
     * between epochs (so it must support reset when {@code numEpochs > 1}).
     *
     * @param iterator the data
     * @param numEpochs number of passes (&gt;= 1)
     */
    public void fit(DataSetIterator iterator, int numEpochs) {
        checkEpochs(numEpochs, iterator.resetSupported(), iterator.getClass());
        for (int e = 0; e < numEpochs; e++) {
            if (e > 0) {
                iterator.reset();
            }
            fit(iterator);
        }
    }

    /**
     * {@code numEpochs} epochs, each as {@link #fit(MultiDataSetIterator)}; the iterator is reset
     * between epochs (so it must support reset when {@code numEpochs > 1}).
     *
     * @param iterator the data
     * @param numEpochs number of passes (&gt;= 1)
     */
    public void fit(MultiDataSetIterator iterator, int numEpochs) {
        checkEpochs(numEpochs, iterator.resetSupported(), iterator.getClass());
        for (int e = 0; e < numEpochs; e++) {
            if (e > 0) {
                iterator.reset();
            }
            fit(iterator);
        }
    }

    private static void checkEpochs(int numEpochs, boolean resettable, Class<?> iteratorClass) {
        if (numEpochs <= 0) {
            throw new IllegalArgumentException("numEpochs must be > 0, got " + numEpochs);
        }
        if (numEpochs > 1 && !resettable) {
            throw new IllegalStateException("cannot fit " + numEpochs + " epochs: the iterator "
                    + iteratorClass.getName() + " does not support reset()");
        }
    }

    // ---- inference -------------------------------------------------------------------------------

    /**
     * @param input one features array per network input
     * @return one array {@code [N, nOut]} per network output, in inference mode
     */
    public INDArray[] output(INDArray... input) {
        return output(false, input);
    }

    /**
     * @param train true for a training-mode forward pass (dropout active, batch statistics)
     * @param input one features array per network input
     * @return one array {@code [N, nOut]} per network output
     */
    public INDArray[] output(boolean train, INDArray... input) {
        return output(train, input, null);
    }

    /**
     * @param train true for a training-mode forward pass
     * @param input one features array per network input
     * @param inputMasks one mask per input (null entries for none), or null
     * @return one array {@code [N, nOut]} per network output
     */
    public INDArray[] output(boolean train, INDArray[] input, INDArray[] inputMasks) {
        long h = handle();
        Objects.requireNonNull(input, "input");
        int rows = rowsOf(input, conf.getNetworkInputs(), "features");
        Arrays2 in = withMasks(data(input), inputMasks);
        float[][] out = NativeGraph.output(h, in.data, rows, train, in.masks, in.maskCols);
        return shapeOutputs(out, rows, false);
    }

    /**
     * Each output as {@code [N, nOut]}, or {@code [N, nOut, T]} for an RnnOutputLayer/RnnLossLayer
     * output ({@code [N, nOut]} when {@code oneStep}: an rnnTimeStep of one step).
     */
    private INDArray[] shapeOutputs(float[][] out, int rows, boolean oneStep) {
        List<GraphPort> ports = info().graphOutputs;
        INDArray[] result = new INDArray[out.length];
        for (int k = 0; k < out.length; k++) {
            long series = seriesSize(conf.getNetworkOutputs().get(k));
            if (series > 0 && !oneStep) {
                result[k] = RecurrentArrays.series(out[k], rows, series, outputFormat(conf.getNetworkOutputs().get(k)));
            } else {
                long width = rows == 0 ? (series > 0 ? series : ports.get(k).width) : out[k].length / rows;
                result[k] = new NDArray(out[k], rows, width);
            }
        }
        return result;
    }

    /**
     * The layout of network output {@code k}'s time-series arrays (ferrodl; its output layer's
     * {@code rnnDataFormat}, NCW for other outputs).
     *
     * @param k the output's index in {@code networkOutputs}
     * @return NCW or NWC
     */
    public org.ferrodl.nn.conf.RNNFormat outputFormat(int k) {
        return outputFormat(conf.getNetworkOutputs().get(k));
    }

    /** The layout of a time-series output vertex's arrays. */
    private org.ferrodl.nn.conf.RNNFormat outputFormat(String vertex) {
        org.ferrodl.nn.conf.layers.Layer l = conf.getVertices().get(vertex) == null ? null
                : layerOf(conf.getVertices().get(vertex));
        return l == null ? org.ferrodl.nn.conf.RNNFormat.NCW : RecurrentArrays.outputFormat(LayerWrappers.innermost(l));
    }

    /** The per-step size of a time-series output vertex (RnnOutputLayer/RnnLossLayer), else 0. */
    private long seriesSize(String vertex) {
        org.ferrodl.nn.conf.layers.Layer l = conf.getVertices().get(vertex) == null ? null
                : layerOf(conf.getVertices().get(vertex));
        l = l == null ? null : LayerWrappers.innermost(l);
        if (!(l instanceof RnnOutputLayer || l instanceof RnnLossLayer)) {
            return 0;
        }
        for (LayerEntry e : info().layers) {
            if (vertex.equals(e.name) && e.outputShape.length == 2) {
                return e.outputShape[0];
            }
        }
        return 0;
    }

    private static org.ferrodl.nn.conf.layers.Layer layerOf(GraphVertex v) {
        if (v instanceof org.ferrodl.nn.conf.graph.FrozenVertex) {
            return layerOf(((org.ferrodl.nn.conf.graph.FrozenVertex) v).getUnderlying());
        }
        return v instanceof org.ferrodl.nn.conf.graph.LayerVertex ? ((org.ferrodl.nn.conf.graph.LayerVertex) v).getLayer()
                : null;
    }

    // ---- stateful inference (rnnTimeStep) -----------------------------------------------------

    /**
     * Runs the graph over the next time step(s) from the state the previous call left (the
     * reference's {@code rnnTimeStep}): each recurrent layer starts from its stored state and stores
     * its new one. Inputs {@code [N, C]} are one step (time-series outputs then come back as
     * {@code [N, nOut]}); {@code [N, C, T]} are T steps ({@code [N, nOut, T]}). The state belongs to
     * this graph object only; {@code output}, {@code fit} and {@code score} neither read nor change it.
     *
     * @param inputs one array per network input
     * @return one array per network output
     */
    public INDArray[] rnnTimeStep(INDArray... inputs) {
        long h = handle();
        Objects.requireNonNull(inputs, "inputs");
        int rows = rowsOf(inputs, conf.getNetworkInputs(), "features");
        boolean oneStep = true;
        for (INDArray a : inputs) {
            if (a != null && a.rank() != 2) {
                oneStep = false;
            }
        }
        float[][] out = NativeGraph.rnnTimeStep(h, data(inputs), rows);
        rnnStateRows = rows;
        return shapeOutputs(out, rows, oneStep);
    }

    /** Forgets the state {@link #rnnTimeStep} stored in every recurrent layer. */
    public void rnnClearPreviousState() {
        NativeGraph.rnnClearPreviousState(handle());
        rnnStateRows = 0;
    }

    /**
     * The state a recurrent layer vertex stored at the last {@link #rnnTimeStep} (for an LSTM
     * {@code "prevAct"} and {@code "prevMem"}, each {@code [N, nOut]}); empty when none is stored.
     *
     * @param layerName the layer vertex's name
     * @return a copy of the state
     * @throws IllegalArgumentException when the vertex is not a recurrent layer
     */
    public Map<String, INDArray> rnnGetPreviousState(String layerName) {
        long h = handle();
        String[] keys = stateKeys(h, layerName);
        return RecurrentArrays.stateMap(keys, k -> NativeGraph.rnnGetPreviousState(h, layerName, k), rnnStateRows);
    }

    /**
     * Replaces the stored state of a recurrent layer vertex (values as {@link #rnnGetPreviousState}
     * returns them).
     *
     * @param layerName the layer vertex's name
     * @param state key to {@code [N, size]} values
     * @throws IllegalArgumentException when the vertex is not a recurrent layer
     */
    public void rnnSetPreviousState(String layerName, Map<String, INDArray> state) {
        long h = handle();
        Objects.requireNonNull(state, "state");
        stateKeys(h, layerName);
        int rows = -1;
        for (Map.Entry<String, INDArray> e : state.entrySet()) {
            int r = RecurrentArrays.stateRows(e.getKey(), e.getValue());
            if (rows >= 0 && r != rows) {
                throw new DL4JInvalidInputException("the state values have different numbers of examples: " + rows
                        + " and " + r + " (\"" + e.getKey() + "\")");
            }
            rows = r;
        }
        for (Map.Entry<String, INDArray> e : state.entrySet()) {
            NativeGraph.rnnSetPreviousState(h, layerName, e.getKey(), NDArray.internalData(e.getValue()), rows);
        }
        if (rows >= 0) {
            rnnStateRows = rows;
        }
    }

    private String[] stateKeys(long h, String layerName) {
        Objects.requireNonNull(layerName, "layerName");
        String[] keys = NativeGraph.rnnStateKeys(h, layerName);
        if (keys == null || keys.length == 0) {
            throw new IllegalArgumentException("vertex \"" + layerName + "\" is not a recurrent layer: it keeps no "
                    + "state between rnnTimeStep calls");
        }
        return keys;
    }

    /**
     * Inference over every minibatch of an iterator (reset first when it supports reset), with
     * each minibatch's features masks.
     *
     * @param iterator the data; its labels are not used
     * @return one array per network output, the minibatches' rows stacked in order
     */
    public INDArray[] output(MultiDataSetIterator iterator) {
        handle();
        Objects.requireNonNull(iterator, "iterator");
        if (iterator.resetSupported()) {
            iterator.reset();
        }
        int nOut = numOutputArrays();
        List<List<INDArray>> parts = new ArrayList<>();
        for (int k = 0; k < nOut; k++) {
            parts.add(new ArrayList<>());
        }
        while (iterator.hasNext()) {
            MultiDataSet d = iterator.next();
            INDArray[] out = output(false, d.getFeatures(), d.getFeaturesMaskArrays());
            for (int k = 0; k < nOut; k++) {
                parts.get(k).add(out[k]);
            }
        }
        INDArray[] result = new INDArray[nOut];
        for (int k = 0; k < nOut; k++) {
            result[k] = stackRows(parts.get(k), info().graphOutputs.get(k).width);
        }
        return result;
    }

    /**
     * @param iterator the data of a graph with one input and one output (reset first when it
     *     supports reset); its labels are not used
     * @return the output over every minibatch, rows stacked in order
     * @throws IllegalStateException when the graph has more than one output
     */
    public INDArray outputSingle(DataSetIterator iterator) {
        if (numOutputArrays() != 1) {
            throw new IllegalStateException("outputSingle needs a graph with one output, this one has "
                    + numOutputArrays() + " " + conf.getNetworkOutputs() + ": use output(..)");
        }
        return output(new org.ferrodl.linalg.dataset.adapter.MultiDataSetIteratorAdapter(iterator))[0];
    }

    /** Stacks {@code [n_i, width]} matrices along the rows. */
    private static INDArray stackRows(List<INDArray> parts, long width) {
        int total = 0;
        for (INDArray p : parts) {
            total = Math.addExact(total, Math.toIntExact(p.length()));
        }
        float[] all = new float[total];
        int at = 0;
        for (INDArray p : parts) {
            float[] v = NDArray.internalData(p);
            System.arraycopy(v, 0, all, at, v.length);
            at += v.length;
        }
        return new NDArray(all, width == 0 ? 0 : total / width, width);
    }

    /**
     * @param input one features array per network input
     * @return the only output, in inference mode
     * @throws IllegalStateException when the graph has more than one output
     */
    public INDArray outputSingle(INDArray... input) {
        return outputSingle(false, input);
    }

    /**
     * @param train true for a training-mode forward pass
     * @param input one features array per network input
     * @return the only output
     * @throws IllegalStateException when the graph has more than one output
     */
    public INDArray outputSingle(boolean train, INDArray... input) {
        if (numOutputArrays() != 1) {
            throw new IllegalStateException("outputSingle needs a graph with one output, this one has "
                    + numOutputArrays() + " " + conf.getNetworkOutputs() + ": use output(..)");
        }
        return output(train, input)[0];
    }

    /**
     * The activation of every vertex, as the reference: the network inputs under their names (the
     * arrays given), then each vertex under its name with shape {@code [N, ...]} (its per-example
     * output shape, e.g. {@code [N, C, H, W]} for a convolution); output layers activated.
     *
     * @param input one features array per network input
     * @param train true for a training-mode forward pass
     * @return a new map, inputs first, then vertices in configuration order
     */
    public Map<String, INDArray> feedForward(INDArray[] input, boolean train) {
        return activations(input, train, null);
    }

    private Map<String, INDArray> activations(INDArray[] input, boolean train, INDArray[] featureMasks) {
        long h = handle();
        Objects.requireNonNull(input, "input");
        int rows = rowsOf(input, conf.getNetworkInputs(), "features");
        Arrays2 in = withMasks(data(input), featureMasks);
        float[][] acts = NativeGraph.feedForward(h, in.data, rows, train, in.masks, in.maskCols);
        Map<String, INDArray> out = new LinkedHashMap<>();
        List<String> names = conf.getNetworkInputs();
        for (int k = 0; k < names.size() && k < input.length; k++) {
            out.put(names.get(k), input[k]);
        }
        List<LayerEntry> vs = info().layers;
        for (int v = 0; v < acts.length; v++) {
            long[] per = vs.get(v).outputShape;
            long[] shape = new long[per.length + 1];
            shape[0] = rows;
            System.arraycopy(per, 0, shape, 1, per.length);
            if (per.length == 2 && rows > 0 && per[0] > 0) {
                // [C, T]: T is this call's sequence length (it may differ from call to call)
                shape[2] = acts[v].length / (rows * per[0]);
            }
            out.put(vs.get(v).name, new NDArray(acts[v], shape));
        }
        return out;
    }

    /**
     * The activations of the named vertices, as the reference's
     * {@code output(List<String>, boolean, INDArray[], INDArray[])}.
     *
     * @param layers vertex names, in the order wanted
     * @param train true for a training-mode forward pass
     * @param features one features array per network input
     * @param featureMasks one mask per input (null entries for none), or null
     * @return one array per name, shaped as in {@link #feedForward(INDArray[], boolean)}
     * @throws IllegalArgumentException for a name that is not a vertex
     */
    public INDArray[] output(List<String> layers, boolean train, INDArray[] features, INDArray[] featureMasks) {
        Objects.requireNonNull(layers, "layers");
        Map<String, INDArray> all = activations(features, train, featureMasks);
        INDArray[] out = new INDArray[layers.size()];
        for (int k = 0; k < out.length; k++) {
            String name = layers.get(k);
            if (!getVertices().containsKey(name)) {
                throw new IllegalArgumentException("no vertex named \"" + name + "\"; the vertices are "
                        + getVertices().keySet());
            }
            out[k] = all.get(name);
        }
        return out;
    }

    /**
     * @param input the features of a graph with one input
     * @param train true for a training-mode forward pass
     * @return as {@link #feedForward(INDArray[], boolean)}
     */
    public Map<String, INDArray> feedForward(INDArray input, boolean train) {
        return feedForward(new INDArray[] {input}, train);
    }

    // ---- scores and gradients --------------------------------------------------------------------

    /** @return the score of the last minibatch fitted (before its update); NaN before any fit */
    @Override
    public double score() {
        ensureOpen();
        return score;
    }

    /** @param score the value {@link #score()} returns until the next fit */
    public void setScore(double score) {
        this.score = score;
    }

    /**
     * @param data a graph with one input and one output: features, labels, optional masks
     * @return the score (sum of the output losses + L1/L2) in inference mode
     */
    public double score(DataSet data) {
        return score(multi(data), false);
    }

    /**
     * @param data features, labels, optional masks
     * @param training true to score in training mode (dropout active)
     * @return the score
     */
    public double score(DataSet data, boolean training) {
        return score(multi(data), training);
    }

    /**
     * @param data features per input, labels per output, optional masks
     * @return the score (sum of the output losses, each weighted as configured, + L1/L2) in
     *     inference mode, without training
     */
    public double score(MultiDataSet data) {
        return score(data, false);
    }

    /**
     * @param data features per input, labels per output, optional masks
     * @param training true to score in training mode (dropout active): the parameters do not
     *     change, but the dropout stream advances and {@link #gradient()} then holds this batch's
     *     gradient, as after {@link #computeGradientAndScore(MultiDataSet)}
     * @return the score
     */
    public double score(MultiDataSet data, boolean training) {
        long h = handle();
        Batch b = new Batch(data);
        if (training) {
            return NativeGraph.computeGradientAndScore(h, b.in.data, b.out.data, b.rows, b.in.masks, b.in.maskCols,
                    b.out.masks, b.out.maskCols);
        }
        return NativeGraph.score(h, b.in.data, b.out.data, b.rows, b.in.masks, b.in.maskCols, b.out.masks,
                b.out.maskCols);
    }

    /**
     * @param data a graph with one input and one output
     * @param addRegularizationTerms whether to add the whole L1/L2 term to each example's score
     * @return a column vector {@code [N, 1]} of per-example scores (summed over the outputs)
     */
    public INDArray scoreExamples(DataSet data, boolean addRegularizationTerms) {
        return scoreExamples(multi(data), addRegularizationTerms);
    }

    /**
     * The score of each example in inference mode, summed over the outputs; a labels mask
     * multiplies each example's per-output losses (a fully masked example scores 0 for that
     * output).
     *
     * @param data features per input, labels per output, optional masks
     * @param addRegularizationTerms whether to add the whole L1/L2 term to each example's score
     * @return a column vector {@code [N, 1]}
     */
    public INDArray scoreExamples(MultiDataSet data, boolean addRegularizationTerms) {
        long h = handle();
        Batch b = new Batch(data);
        double[] s = NativeGraph.scoreExamples(h, b.in.data, b.out.data, b.rows, b.in.masks, b.in.maskCols,
                b.out.masks, b.out.maskCols, addRegularizationTerms);
        float[] out = new float[s.length];
        for (int i = 0; i < s.length; i++) {
            out[i] = (float) s[i];
        }
        return new NDArray(out, out.length, 1);
    }

    /**
     * {@link #scoreExamples(MultiDataSet, boolean)} over every minibatch of an iterator (reset first
     * when it is exhausted and resettable), stacked in order.
     *
     * @param iterator the data
     * @param addRegularizationTerms whether to add the whole L1/L2 term to each example's score
     * @return a column vector {@code [N, 1]}
     */
    public INDArray scoreExamples(MultiDataSetIterator iterator, boolean addRegularizationTerms) {
        handle();
        Objects.requireNonNull(iterator, "iterator");
        if (!iterator.hasNext() && iterator.resetSupported()) {
            iterator.reset();
        }
        List<INDArray> parts = new ArrayList<>();
        while (iterator.hasNext()) {
            parts.add(scoreExamples(iterator.next(), addRegularizationTerms));
        }
        return stackRows(parts, 1);
    }

    /**
     * Forward and backward pass in training mode without updating the parameters; the score
     * becomes {@link #score()} and the gradient {@link #gradient()}.
     *
     * @param data features per input, labels per output, optional masks
     */
    public void computeGradientAndScore(MultiDataSet data) {
        score = score(data, true);
    }

    /**
     * @param data a graph with one input and one output
     * @see #computeGradientAndScore(MultiDataSet)
     */
    public void computeGradientAndScore(DataSet data) {
        computeGradientAndScore(multi(data));
    }

    /**
     * @return the gradient of the last {@link #computeGradientAndScore} (after a fit: of the last
     *     update), flat and per parameter key
     */
    public Gradient gradient() {
        long h = handle();
        return new Gradient(NativeGraph.gradient(h), info().params);
    }

    // ---- parameters and state --------------------------------------------------------------------

    /** @return a copy of the flat parameter vector, shape {@code [1, numParams]} */
    @Override
    public INDArray params() {
        float[] p = NativeGraph.params(handle());
        return new NDArray(p, 1, p.length);
    }

    /** @param params flat parameter vector of length {@link #numParams()} (any shape) */
    @Override
    public void setParams(INDArray params) {
        long h = handle();
        NativeGraph.setParams(h, NDArray.internalData(Objects.requireNonNull(params, "params")));
    }

    /** @return the number of parameters */
    @Override
    public long numParams() {
        return NativeGraph.numParams(handle());
    }

    /**
     * Every parameter by the reference's graph key {@code "<vertex>_<name>"} ({@code dense1_W},
     * {@code dense1_b}, ...), in the layout order of {@link #params()}; shapes as
     * {@link org.ferrodl.nn.multilayer.MultiLayerNetwork#paramTable()}. The arrays are copies.
     *
     * @return a new, modifiable map in layout order
     */
    public Map<String, INDArray> paramTable() {
        long h = handle();
        NetworkInfo ni = info();
        float[] p = NativeGraph.params(h);
        Map<String, INDArray> out = new LinkedHashMap<>();
        for (ParamEntry e : ni.params) {
            out.put(e.key, e.slice(p));
        }
        return out;
    }

    private ParamEntry entry(String key) {
        ParamEntry e = info().byKey.get(key);
        if (e == null) {
            throw new IllegalArgumentException("no parameter \"" + key + "\" in this graph; its keys are "
                    + info().byKey.keySet());
        }
        return e;
    }

    /**
     * @param key a key of {@link #paramTable()}, e.g. {@code "dense1_W"}
     * @return a copy of that parameter
     * @throws IllegalArgumentException for an unknown key
     */
    public INDArray getParam(String key) {
        long h = handle();
        return entry(key).slice(NativeGraph.params(h));
    }

    /**
     * Replaces one parameter.
     *
     * @param key a key of {@link #paramTable()}
     * @param value the new values: any shape with the parameter's number of elements, in C order
     * @throws IllegalArgumentException for an unknown key or a wrong number of values
     */
    public void setParam(String key, INDArray value) {
        long h = handle();
        ParamEntry e = entry(key);
        Objects.requireNonNull(value, "value");
        if (value.length() != e.length) {
            throw new IllegalArgumentException("parameter " + key + " has " + e.length + " values "
                    + Arrays.toString(e.shape) + " but the new value has " + value.length() + " "
                    + Arrays.toString(value.shape()));
        }
        float[] p = NativeGraph.params(h);
        System.arraycopy(NDArray.internalData(value), 0, p, e.offset, e.length);
        NativeGraph.setParams(h, p);
    }

    /** @return a copy of the flat updater state, shape {@code [1, n]} (n is 0 for plain SGD) */
    public INDArray getUpdaterState() {
        float[] s = NativeGraph.updaterState(handle());
        return new NDArray(s, 1, s.length);
    }

    /** @param state flat updater state of the length {@link #getUpdaterState()} returns */
    public void setUpdaterState(INDArray state) {
        long h = handle();
        NativeGraph.setUpdaterState(h, NDArray.internalData(Objects.requireNonNull(state, "state")));
    }

    private long[] counters() {
        long[] c = NativeGraph.counters(handle());
        if (c == null || c.length != 2) {
            throw new NativeStateException("native counters() returned " + Arrays.toString(c));
        }
        return c;
    }

    /** @return the number of iterations (minibatches fitted) so far */
    public int getIterationCount() {
        if (!hasHandle()) {
            ensureOpen();
            return conf.getIterationCount();
        }
        return Math.toIntExact(counters()[0]);
    }

    /** @return the number of completed epochs */
    public int getEpochCount() {
        if (!hasHandle()) {
            ensureOpen();
            return conf.getEpochCount();
        }
        return Math.toIntExact(counters()[1]);
    }

    /** @param iterationCount new iteration counter (&gt;= 0) */
    public void setIterationCount(int iterationCount) {
        setCounters(iterationCount, getEpochCount());
    }

    /** @param epochCount new epoch counter (&gt;= 0) */
    public void setEpochCount(int epochCount) {
        setCounters(getIterationCount(), epochCount);
    }

    /** Adds one to the epoch counter. */
    public void incrementEpochCount() {
        setEpochCount(getEpochCount() + 1);
    }

    private void setCounters(int iteration, int epoch) {
        if (iteration < 0 || epoch < 0) {
            throw new IllegalArgumentException("counters must be >= 0, got iteration " + iteration + ", epoch "
                    + epoch);
        }
        if (!hasHandle()) {
            ensureOpen();
            conf.setIterationCount(iteration);
            conf.setEpochCount(epoch);
        } else {
            NativeGraph.setCounters(handle(), iteration, epoch);
        }
    }

    /**
     * @return the configuration, with the current iteration and epoch counters (a live object: the
     *     counters are refreshed on every call)
     */
    public ComputationGraphConfiguration getConfiguration() {
        ensureOpen();
        if (hasHandle()) {
            long[] c = counters();
            conf.setIterationCount(Math.toIntExact(c[0]));
            conf.setEpochCount(Math.toIntExact(c[1]));
        }
        return conf;
    }

    // ---- listeners -------------------------------------------------------------------------------

    private List<TrainingListener> listeners() {
        if (listeners == null) {
            listeners = new ArrayList<>();
        }
        return listeners;
    }

    private static List<TrainingListener> checked(Collection<? extends TrainingListener> ls) {
        List<TrainingListener> out = new ArrayList<>(ls.size());
        for (TrainingListener l : ls) {
            out.add(Objects.requireNonNull(l, "a listener must not be null"));
        }
        return out;
    }

    @Override
    public void setListeners(TrainingListener... listeners) {
        setListeners(listeners == null ? null : Arrays.asList(listeners));
    }

    @Override
    public void setListeners(Collection<TrainingListener> listeners) {
        ensureOpen();
        this.listeners = listeners == null ? new ArrayList<>() : checked(listeners);
    }

    @Override
    public void addListeners(TrainingListener... listeners) {
        ensureOpen();
        if (listeners != null) {
            listeners().addAll(checked(Arrays.asList(listeners)));
        }
    }

    @Override
    public Collection<TrainingListener> getListeners() {
        ensureOpen();
        return Collections.unmodifiableList(listeners());
    }

    /** @return the number of examples of the last minibatch fitted (0 before any fit) */
    @Override
    public int batchSize() {
        return lastBatchSize;
    }

    /** @return milliseconds spent in {@code iterator.next()} for the last minibatch fitted */
    public long getLastEtlTime() {
        return lastEtlTimeMs;
    }

    // ---- vertices and layers ---------------------------------------------------------------------

    /** The engine's description of this graph; before {@link #init()} from a temporary handle. */
    private NetworkInfo info() {
        ensureOpen();
        if (info != null) {
            return info;
        }
        if (hasHandle()) {
            long h = handle();
            info = NetworkInfo.ofGraph(NativeGraph.vertexInfo(h), NativeGraph.paramTable(h));
            return info;
        }
        NativeLoader.load();
        long h = NativeGraph.create(conf.toJson());
        try {
            return NetworkInfo.ofGraph(NativeGraph.vertexInfo(h), NativeGraph.paramTable(h));
        } finally {
            NativeGraph.destroy(h);
        }
    }

    private LayerEntry layerEntry(String name) {
        List<String> layers = new ArrayList<>();
        for (LayerEntry e : info().layers) {
            if (isLayer(e)) {
                if (e.name.equals(name)) {
                    return e;
                }
                layers.add(e.name);
            }
        }
        throw new IllegalArgumentException("no layer named \"" + name + "\"; the layers are " + layers);
    }

    private static boolean isLayer(LayerEntry e) {
        return "LayerVertex".equals(e.vertexType);
    }

    /**
     * @param name a layer vertex's name
     * @return a read-only view of that layer (parameters read through to the graph)
     * @throws IllegalArgumentException when no layer vertex has that name
     */
    public Layer getLayer(String name) {
        handle();
        return view(layerEntry(name));
    }

    /** @return read-only views of the layer vertices, in execution (topological) order */
    public Layer[] getLayers() {
        handle();
        Map<String, LayerEntry> byName = new LinkedHashMap<>();
        for (LayerEntry e : info().layers) {
            byName.put(e.name, e);
        }
        List<Layer> out = new ArrayList<>();
        for (String v : info().executionOrder) {
            LayerEntry e = byName.get(v);
            if (e != null && isLayer(e)) {
                out.add(view(e));
            }
        }
        return out.toArray(new Layer[0]);
    }

    private Layer view(LayerEntry e) {
        return new LayerView(e, () -> NativeGraph.params(handle()), () -> conf.getConf(e.name));
    }

    /** @return the number of layer vertices */
    public int getNumLayers() {
        int n = 0;
        for (LayerEntry e : info().layers) {
            if (isLayer(e)) {
                n++;
            }
        }
        return n;
    }

    /**
     * @return the vertices (configuration objects, read-only map) by name, in the order they were
     *     added; network inputs are not vertices
     */
    public Map<String, GraphVertex> getVertices() {
        ensureOpen();
        return conf.getVertices();
    }

    /**
     * @param name a vertex name
     * @return its configuration object
     * @throws IllegalArgumentException for an unknown name
     */
    public GraphVertex getVertex(String name) {
        GraphVertex v = getVertices().get(name);
        if (v == null) {
            throw new IllegalArgumentException("no vertex named \"" + name + "\"; the vertices are "
                    + getVertices().keySet());
        }
        return v;
    }

    /** @return the vertex names in execution (topological) order, as the engine runs them */
    public List<String> getVertexNames() {
        return info().executionOrder;
    }

    /** @return the number of network inputs */
    public int getNumInputArrays() {
        ensureOpen();
        return conf.getNetworkInputs().size();
    }

    /** @return the number of network outputs */
    public int getNumOutputArrays() {
        return numOutputArrays();
    }

    private int numOutputArrays() {
        ensureOpen();
        return conf.getNetworkOutputs().size();
    }

    /** @return values per example of each network input, in {@code networkInputs} order */
    public long[] numInputs() {
        return widths(info().graphInputs);
    }

    /** @return values per example of each network output, in {@code networkOutputs} order */
    public long[] numOutputs() {
        return widths(info().graphOutputs);
    }

    private static long[] widths(List<GraphPort> ports) {
        long[] w = new long[ports.size()];
        for (int k = 0; k < w.length; k++) {
            w[k] = ports.get(k).width;
        }
        return w;
    }

    /**
     * @param layerName a layer vertex's name
     * @return its {@code nOut} (0 for a layer without one, e.g. a pooling layer)
     * @throws IllegalArgumentException when no layer vertex has that name
     */
    public long layerSize(String layerName) {
        handle();
        Long n = layerEntry(layerName).nOut;
        return n == null ? 0 : n;
    }

    /**
     * @param layerName a layer vertex's name
     * @return its {@code nIn} (0 for a layer without one)
     * @throws IllegalArgumentException when no layer vertex has that name
     */
    public long layerInputSize(String layerName) {
        handle();
        Long n = layerEntry(layerName).nIn;
        return n == null ? 0 : n;
    }

    /**
     * @param outputLayerIdx index into {@code networkOutputs}
     * @return a read-only view of that output layer
     * @throws IllegalArgumentException for an index out of range
     */
    public Layer getOutputLayer(int outputLayerIdx) {
        List<String> outs = getConfiguration().getNetworkOutputs();
        if (outputLayerIdx < 0 || outputLayerIdx >= outs.size()) {
            throw new IllegalArgumentException("output index " + outputLayerIdx + " is out of range: the graph has "
                    + outs.size() + " outputs " + outs);
        }
        return getLayer(outs.get(outputLayerIdx));
    }

    /**
     * @param layerName a layer vertex's name
     * @return the current learning rate of its weights (its schedule at the current counters), or
     *     null for a layer without parameters
     * @throws DL4JInvalidInputException for a name that is not a vertex
     */
    public Double getLearningRate(String layerName) {
        double lr = NativeGraph.learningRate(handle(), layerName);
        return Double.isNaN(lr) ? null : lr;
    }

    /**
     * A table of the vertices as {@link org.ferrodl.nn.multilayer.MultiLayerNetwork#summary()}
     * with each vertex's inputs; network inputs first. Works before {@link #init()} too.
     *
     * @return the table, one line per vertex
     */
    public String summary() {
        return SummaryTable.graph(info());
    }

    // ---- evaluation ------------------------------------------------------------------------------

    /**
     * Classification evaluation of a graph with one output over a {@link DataSetIterator} (reset
     * first when it supports reset).
     *
     * @param iterator the data
     * @return the evaluation
     */
    public Evaluation evaluate(DataSetIterator iterator) {
        return evaluate(new org.ferrodl.linalg.dataset.adapter.MultiDataSetIteratorAdapter(iterator));
    }

    /**
     * Classification evaluation of a graph with one output (reset first when it supports reset),
     * honouring labels masks.
     *
     * @param iterator the data
     * @return the evaluation
     * @throws IllegalStateException when the graph has more than one output (use
     *     {@link #doEvaluation(MultiDataSetIterator, Map)})
     */
    public Evaluation evaluate(MultiDataSetIterator iterator) {
        return singleOutput(iterator, new Evaluation((int) numOutputs()[0]));
    }

    /**
     * Regression evaluation of a graph with one output, columns named {@code col_0}, ...
     *
     * @param iterator the data (reset first when it supports reset)
     * @return the evaluation
     */
    public RegressionEvaluation evaluateRegression(DataSetIterator iterator) {
        return evaluateRegression(new org.ferrodl.linalg.dataset.adapter.MultiDataSetIteratorAdapter(iterator));
    }

    /**
     * @param iterator the data (reset first when it supports reset)
     * @return the regression evaluation of a graph with one output
     * @throws IllegalStateException for several outputs or a SOFTMAX (classifier) output
     */
    public RegressionEvaluation evaluateRegression(MultiDataSetIterator iterator) {
        handle();
        if ("SOFTMAX".equals(outputActivation(0))) {
            throw new IllegalStateException("output \"" + conf.getNetworkOutputs().get(0) + "\" is a classifier "
                    + "(SOFTMAX): evaluate it with evaluate(..), not with a RegressionEvaluation");
        }
        return singleOutput(iterator, new RegressionEvaluation(numOutputs()[0]));
    }

    /**
     * ROC of a graph with one output that has one sigmoid column or two softmax columns (the
     * positive class is column 1), as {@link ROC#eval}.
     *
     * @param iterator the data (reset first when it supports reset)
     * @param rocThresholdSteps 0 for the exact curve, else the number of threshold steps
     * @return the ROC
     */
    public ROC evaluateROC(DataSetIterator iterator, int rocThresholdSteps) {
        return singleOutput(new org.ferrodl.linalg.dataset.adapter.MultiDataSetIteratorAdapter(iterator),
                new ROC(rocThresholdSteps));
    }

    /**
     * @param iterator the data (reset first when it supports reset)
     * @param rocThresholdSteps 0 for exact curves, else the number of threshold steps
     * @return one-vs-all ROC per class of a graph with one output
     */
    public ROCMultiClass evaluateROCMultiClass(DataSetIterator iterator, int rocThresholdSteps) {
        return singleOutput(new org.ferrodl.linalg.dataset.adapter.MultiDataSetIteratorAdapter(iterator),
                new ROCMultiClass(rocThresholdSteps));
    }

    private String outputActivation(int k) {
        String name = conf.getNetworkOutputs().get(k);
        for (LayerEntry e : info().layers) {
            if (e.name.equals(name)) {
                return e.outputActivation;
            }
        }
        return null;
    }

    private <T extends IEvaluation<T>> T singleOutput(MultiDataSetIterator iterator, T evaluation) {
        if (numOutputArrays() != 1) {
            throw new IllegalStateException("this graph has " + numOutputArrays() + " outputs "
                    + conf.getNetworkOutputs() + ": one evaluation cannot score them all; use "
                    + "doEvaluation(iterator, Map<outputIndex, evaluations>)");
        }
        Map<Integer, IEvaluation<?>[]> m = new LinkedHashMap<>();
        m.put(0, new IEvaluation<?>[] {evaluation});
        doEvaluation(iterator, m);
        return evaluation;
    }

    /**
     * Runs the data once (reset first when it supports reset) and feeds each output's inference
     * predictions, with that output's labels and labels mask, to its evaluations.
     *
     * @param iterator the data
     * @param evaluations per output index (in {@code networkOutputs} order) the evaluations to feed
     * @return {@code evaluations}
     * @throws IllegalArgumentException for an output index out of range
     */
    public Map<Integer, IEvaluation<?>[]> doEvaluation(MultiDataSetIterator iterator,
            Map<Integer, IEvaluation<?>[]> evaluations) {
        handle();
        Objects.requireNonNull(iterator, "iterator");
        for (Integer k : evaluations.keySet()) {
            if (k == null || k < 0 || k >= numOutputArrays()) {
                throw new IllegalArgumentException("output index " + k + " is out of range: the graph has "
                        + numOutputArrays() + " outputs " + conf.getNetworkOutputs());
            }
        }
        if (iterator.resetSupported()) {
            iterator.reset();
        }
        while (iterator.hasNext()) {
            MultiDataSet d = iterator.next();
            INDArray[] out = output(false, d.getFeatures(), d.getFeaturesMaskArrays());
            for (Map.Entry<Integer, IEvaluation<?>[]> e : evaluations.entrySet()) {
                int k = e.getKey();
                for (IEvaluation<?> ev : e.getValue()) {
                    RecurrentArrays.eval(ev, d.getLabels(k), out[k], d.getLabelsMaskArray(k), outputFormat(k));
                }
            }
        }
        return evaluations;
    }

    // ---- persistence and copies ------------------------------------------------------------------

    /**
     * Saves configuration, parameters and updater state ({@link ModelSerializer#writeModel}).
     *
     * @param f destination file
     * @throws IOException on a write error
     */
    public void save(File f) throws IOException {
        save(f, true);
    }

    /**
     * @param f destination file
     * @param saveUpdater whether to include the updater state
     * @throws IOException on a write error
     */
    public void save(File f, boolean saveUpdater) throws IOException {
        handle();
        ModelSerializer.writeModel(this, f, saveUpdater);
    }

    /**
     * @param f a file written by {@link #save(File, boolean)}
     * @param loadUpdater whether to restore the updater state (when the file has one)
     * @return the initialized graph
     * @throws IOException when the file cannot be read or is not a ferrodl ComputationGraph
     */
    public static ComputationGraph load(File f, boolean loadUpdater) throws IOException {
        return ModelSerializer.restoreComputationGraph(f, loadUpdater);
    }

    /**
     * @param f a file written by {@link #save(File, boolean)}
     * @return the initialized graph with its updater state
     * @throws IOException when the file cannot be read or is not a ferrodl ComputationGraph
     */
    public static ComputationGraph load(File f) throws IOException {
        return load(f, true);
    }

    /**
     * @return an independent, initialized copy (configuration, parameters, updater state, counters
     *     and score); must be closed separately
     */
    @Override
    public ComputationGraph clone() {
        ComputationGraph c = new ComputationGraph(getConfiguration());
        if (hasHandle()) {
            c.init();
            long h = handle();
            NativeGraph.setParams(c.handle(), NativeGraph.params(h));
            NativeGraph.setUpdaterState(c.handle(), NativeGraph.updaterState(h));
            long[] counters = counters();
            NativeGraph.setCounters(c.handle(), counters[0], counters[1]);
        }
        c.score = score;
        return c;
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        boolean initialized = hasHandle();
        out.writeUTF(initialized ? "init" : "conf");
        byte[] json = getConfiguration().toJson().getBytes(StandardCharsets.UTF_8);
        out.writeInt(json.length);
        out.write(json);
        out.writeDouble(score);
        if (initialized) {
            out.writeObject(NativeGraph.params(handle()));
            out.writeObject(NativeGraph.updaterState(handle()));
        }
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        String mode = in.readUTF();
        int n = in.readInt();
        if (n < 0) {
            throw new InvalidObjectException("negative configuration length");
        }
        byte[] json = new byte[n];
        in.readFully(json);
        this.conf = ComputationGraphConfiguration.fromJson(new String(json, StandardCharsets.UTF_8));
        this.score = in.readDouble();
        if ("init".equals(mode)) {
            float[] params = (float[]) in.readObject();
            float[] upd = (float[]) in.readObject();
            init();
            NativeGraph.setParams(handle(), params);
            NativeGraph.setUpdaterState(handle(), upd);
        }
    }

    @Override
    public String toString() {
        return "ComputationGraph(inputs=" + conf.getNetworkInputs() + ", outputs=" + conf.getNetworkOutputs()
                + ", vertices=" + conf.getVertices().size()
                + (isClosed() ? ", closed" : !hasHandle() ? ", not initialized" : "") + ")";
    }
}
