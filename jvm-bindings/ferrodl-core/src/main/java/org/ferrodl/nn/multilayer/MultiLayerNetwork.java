package org.ferrodl.nn.multilayer;

import java.io.File;
import java.io.IOException;
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
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.jni.NativeLoader;
import org.ferrodl.jni.NativeNetwork;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.api.Layer;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.nn.api.RecurrentArrays;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.EmbeddingSequenceLayer;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.layers.RnnLossLayer;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.conf.layers.recurrent.TimeDistributed;
import org.ferrodl.nn.info.LayerView;
import org.ferrodl.nn.info.NetworkInfo;
import org.ferrodl.nn.info.NetworkInfo.LayerEntry;
import org.ferrodl.nn.info.NetworkInfo.ParamEntry;
import org.ferrodl.nn.info.SummaryTable;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.util.ModelSerializer;

/**
 * A multi-layer feed-forward network trained by the native engine.
 *
 * <pre>{@code
 * try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
 *     net.init();
 *     net.fit(trainIterator, 5);
 *     Evaluation eval = net.evaluate(testIterator);
 * }
 * }</pre>
 *
 * <p>The network owns a native handle created by {@link #init()} and released by {@link #close()}
 * (idempotent; any later call except {@code close()} throws {@link NativeStateException} "network is
 * closed"); see {@link NativeHandleOwner}, which also releases the handle of a network that becomes
 * unreachable without being closed, but only as a safety net: close networks explicitly.
 *
 * <p>{@link #save(File, boolean)} and {@link #load(File, boolean)} use {@link ModelSerializer}.
 *
 * <p>Java serialization writes the configuration JSON, parameters, updater state, counters and last
 * score; deserialization creates a new native handle.
 *
 * <p>Training listeners ({@link #setListeners(TrainingListener...)}) are not serialized and not
 * copied by {@link #clone()}.
 *
 * <p><b>Not thread-safe.</b> Use one network per thread (see {@link #clone()}). Concurrent calls
 * cannot corrupt native memory (the engine serializes calls per handle) but their interleaving is
 * unspecified.
 */
public class MultiLayerNetwork extends NativeHandleOwner implements Model, Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** Version of the model ZIP format written by {@link #save(File, boolean)}. */
    public static final int MODEL_FORMAT_VERSION = ModelSerializer.MODEL_FORMAT_VERSION;
    /** ZIP entry holding the configuration JSON. */
    public static final String CONFIGURATION_JSON = ModelSerializer.CONFIGURATION_JSON;
    /** ZIP entry holding the parameters. */
    public static final String COEFFICIENTS_BIN = ModelSerializer.COEFFICIENTS_BIN;
    /** ZIP entry holding the updater state (optional). */
    public static final String UPDATER_BIN = ModelSerializer.UPDATER_BIN;
    /** ZIP entry holding the format properties. */
    public static final String MODEL_PROPERTIES = ModelSerializer.MODEL_PROPERTIES;

    private transient MultiLayerConfiguration conf;
    private transient double score = Double.NaN;
    private transient int nIn;
    private transient int nOut;
    /** Whether the first layer is recurrent: features must then be [N, C, T] (the reference's rule). */
    private transient boolean recurrentInput;
    /** Whether the first layer is an EmbeddingSequenceLayer: indices [N, T] or [N, 1, T]. */
    private transient boolean indexSequenceInput;
    /** Whether the last layer is an RnnOutputLayer/RnnLossLayer: labels and output are [N, nOut, T]. */
    private transient boolean recurrentOutput;
    /** The output layer's layout: NWC outputs come back {@code [N, T, nOut]}. */
    private transient org.ferrodl.nn.conf.RNNFormat outputFormat;
    /** Examples of the stored rnnTimeStep state (0: none stored). */
    private transient int rnnStateRows;
    private transient List<TrainingListener> listeners;
    private transient int lastBatchSize;
    private transient long lastEtlTimeMs;
    /** Layer and parameter descriptions from the engine; fixed for the life of a handle. */
    private transient NetworkInfo info;

    /**
     * Creates an uninitialized network; call {@link #init()} before use.
     *
     * @param conf the configuration (copied)
     */
    public MultiLayerNetwork(MultiLayerConfiguration conf) {
        this.conf = Objects.requireNonNull(conf, "conf").clone();
        this.conf.validate();
        readDims(this.conf);
    }

    private void readDims(MultiLayerConfiguration c) {
        FeedForwardDims d = dims(c);
        this.nIn = d.nIn;
        this.nOut = d.nOut;
        List<org.ferrodl.nn.conf.layers.Layer> ls = c.getLayers();
        org.ferrodl.nn.conf.layers.Layer first = ls.get(0);
        this.recurrentInput = LayerWrappers.isRecurrent(first) || first instanceof TimeDistributed
                || c.getInputPreProcess(0) instanceof org.ferrodl.nn.conf.preprocessor.RnnToCnnPreProcessor;
        this.indexSequenceInput = LayerWrappers.innermost(first) instanceof EmbeddingSequenceLayer;
        org.ferrodl.nn.conf.layers.Layer last = LayerWrappers.innermost(ls.get(ls.size() - 1));
        this.recurrentOutput = last instanceof RnnOutputLayer || last instanceof RnnLossLayer;
        this.outputFormat = RecurrentArrays.outputFormat(last);
    }

    private static final class FeedForwardDims {
        final int nIn;
        final int nOut;

        FeedForwardDims(int nIn, int nOut) {
            this.nIn = nIn;
            this.nOut = nOut;
        }
    }

    private static FeedForwardDims dims(MultiLayerConfiguration c) {
        // values per example of the input and the output; per time step for time series
        List<InputType> out = c.getLayerActivationTypes();
        return new FeedForwardDims(Math.toIntExact(size(c.getLayerInputTypes().get(0))),
                Math.toIntExact(size(out.get(out.size() - 1))));
    }

    private static long size(InputType t) {
        return t instanceof InputType.InputTypeRecurrent ? ((InputType.InputTypeRecurrent) t).getSize()
                : t.arrayElementsPerExample();
    }

    /**
     * Creates the native network and initializes its parameters from the configuration's seed.
     * Does nothing when already initialized.
     */
    public void init() {
        ensureOpen();
        if (hasHandle()) {
            return;
        }
        NativeLoader.load();
        adoptHandle(NativeNetwork.create(conf.toJson()), NativeNetwork::destroy);
    }

    /**
     * Initializes, then sets the parameters.
     *
     * @param parameters flat parameter vector of length {@link #numParams()}, or null for seeded init
     * @param cloneParametersArray ignored: parameters are always copied into the native network
     */
    public void init(INDArray parameters, boolean cloneParametersArray) {
        ensureOpen();
        if (parameters != null && !hasHandle()) {
            // built with these parameters: no seeded weight draw for them to replace
            NativeLoader.load();
            adoptHandle(NativeNetwork.createWithParams(conf.toJson(), NDArray.internalData(parameters)),
                    NativeNetwork::destroy);
            return;
        }
        init();
        if (parameters != null) {
            setParams(parameters);
        }
    }

    private static int rowsOf(INDArray a, boolean series, String what) {
        if (a == null) {
            throw new DL4JInvalidInputException(what + " must not be null");
        }
        RecurrentArrays.checkRank(a, series, what);
        return Math.toIntExact(a.size(0));
    }

    /** The examples of a features array, after the reference's rank rule for the first layer. */
    private int featureRows(INDArray a) {
        if (indexSequenceInput && a != null && a.rank() == 3 && a.size(1) == 1) {
            return Math.toIntExact(a.size(0)); // [N, 1, T] indices, as the reference's EmbeddingSequenceLayer takes
        }
        return rowsOf(a, recurrentInput, "features");
    }

    private static float[] data(INDArray a) {
        return a == null ? null : NDArray.internalData(a);
    }

    /**
     * Features, labels and masks of one call, as the native methods take them: a {@code [N, C, T]}
     * array is N rows of C·T values, a {@code [N, T]} mask N rows of T (RNN_CONTRACT.md).
     */
    private final class Batch {
        final float[] f;
        final int rows;
        final int fCols;
        final float[] l;
        final int lCols;
        final float[] fMask;
        final int fMaskCols;
        final float[] mask;
        final int maskCols;

        Batch(DataSet data) {
            if (data == null) {
                throw new DL4JInvalidInputException("the DataSet must not be null");
            }
            INDArray fa = data.getFeatures();
            INDArray la = data.getLabels();
            rows = featureRows(fa);
            int lRows = rowsOf(la, recurrentOutput, "labels");
            if (lRows != rows) {
                throw new DL4JInvalidInputException("labels have " + lRows + " rows but features have " + rows);
            }
            f = NDArray.internalData(fa);
            fCols = RecurrentArrays.rowWidth(fa, rows);
            l = NDArray.internalData(la);
            lCols = RecurrentArrays.rowWidth(la, rows);
            INDArray fm = data.getFeaturesMaskArray();
            fMaskCols = RecurrentArrays.maskCols(fm, "the features mask");
            fMask = data(fm);
            INDArray m = data.getLabelsMaskArray();
            maskCols = RecurrentArrays.labelsMaskCols(m);
            mask = data(m);
        }
    }

    /**
     * One training iteration on one minibatch (the iteration counter grows by one), then
     * {@link TrainingListener#iterationDone} on every listener. The features mask, if any, is not
     * used by dense layers; the labels mask is.
     *
     * @param data features {@code N × nIn}, labels {@code N × nOut}, optional labels mask
     *     ({@code N × 1} or {@code N × nOut})
     * @throws DL4JInvalidInputException for wrong widths, mismatched rows or NaN/infinite values
     */
    public void fit(DataSet data) {
        fitBatch(data, 0);
    }

    private void fitBatch(DataSet data, long etlTimeMs) {
        long h = handle();
        Batch b = new Batch(data);
        score = NativeNetwork.fit(h, b.f, b.rows, b.fCols, b.l, b.lCols, b.fMask, b.fMaskCols, b.mask, b.maskCols);
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

    /**
     * @param features {@code N × nIn}
     * @param labels {@code N × nOut}
     * @see #fit(DataSet)
     */
    public void fit(INDArray features, INDArray labels) {
        fit(new DataSet(features, labels));
    }

    /**
     * One training iteration with masks (the reference's overload).
     *
     * @param features features ({@code [N, C, T]} for a recurrent first layer)
     * @param labels labels ({@code [N, nOut, T]} for an RnnOutputLayer)
     * @param featuresMask null or {@code [N, T]}: 0 marks the padding steps of shorter sequences
     * @param labelsMask null, {@code [N, T]} for time-series labels, or {@code N × 1} / {@code N × nOut}
     * @see #fit(DataSet)
     */
    public void fit(INDArray features, INDArray labels, INDArray featuresMask, INDArray labelsMask) {
        fit(new DataSet(features, labels, featuresMask, labelsMask));
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
    public void fit(DataSetIterator iterator) {
        handle();
        Objects.requireNonNull(iterator, "iterator");
        if (!iterator.hasNext() && iterator.resetSupported()) {
            iterator.reset();
        }
        for (TrainingListener l : new ArrayList<>(listeners())) {
            l.onEpochStart(this);
        }
        while (iterator.hasNext()) {
            long t0 = System.nanoTime();
            DataSet next = iterator.next();
            long etl = (System.nanoTime() - t0) / 1_000_000L;
            fitBatch(next, etl);
        }
        for (TrainingListener l : new ArrayList<>(listeners())) {
            l.onEpochEnd(this);
        }
        incrementEpochCount();
    }

    /**
     * {@code numEpochs} epochs, each as {@link #fit(DataSetIterator)} (with its listener calls); the
     * iterator is reset between epochs (so it must support reset when {@code numEpochs > 1}). The
     * epoch counter grows by one per epoch.
     *
     * @param iterator the data
     * @param numEpochs number of passes (&gt;= 1)
     */
    public void fit(DataSetIterator iterator, int numEpochs) {
        if (numEpochs <= 0) {
            throw new IllegalArgumentException("numEpochs must be > 0, got " + numEpochs);
        }
        if (numEpochs > 1 && !iterator.resetSupported()) {
            throw new IllegalStateException("cannot fit " + numEpochs + " epochs: the iterator "
                    + iterator.getClass().getName() + " does not support reset()");
        }
        for (int e = 0; e < numEpochs; e++) {
            if (e > 0) {
                iterator.reset();
            }
            fit(iterator);
        }
    }

    /**
     * @param input {@code N × nIn} features
     * @return the network output in inference mode, {@code N × nOut}
     */
    public INDArray output(INDArray input) {
        return output(input, false);
    }

    /**
     * @param input {@code N × nIn} features
     * @param train true for a training-mode forward pass
     * @return the network output, {@code N × nOut}
     */
    public INDArray output(INDArray input, boolean train) {
        return output(input, train, null, null);
    }

    /**
     * The network output with masks (the reference's overload): a features mask marks the padding
     * steps of shorter sequences in a minibatch of time series; they do not change the real steps'
     * outputs, and a recurrent layer outputs 0 at them.
     *
     * @param input features ({@code [N, C, T]} for a recurrent first layer)
     * @param train true for a training-mode forward pass
     * @param featuresMask null or {@code [N, T]}
     * @param labelsMask not used by the forward pass (accepted for the reference's signature)
     * @return the output: {@code [N, nOut, T]} for an RnnOutputLayer/RnnLossLayer, else {@code [N, nOut]}
     */
    public INDArray output(INDArray input, boolean train, INDArray featuresMask, INDArray labelsMask) {
        long h = handle();
        int rows = featureRows(input);
        int maskCols = RecurrentArrays.maskCols(featuresMask, "the features mask");
        float[] out = NativeNetwork.output(h, NDArray.internalData(input), rows, RecurrentArrays.rowWidth(input, rows),
                data(featuresMask), maskCols, train);
        return shapeOutput(out, rows);
    }

    /**
     * The layout of this network's time-series output and labels (ferrodl; the output layer's
     * {@code rnnDataFormat}, NCW for other outputs).
     *
     * @return NCW or NWC
     */
    public org.ferrodl.nn.conf.RNNFormat outputFormat() {
        return outputFormat;
    }

    private INDArray shapeOutput(float[] out, int rows) {
        if (recurrentOutput) {
            return RecurrentArrays.series(out, rows, nOut, outputFormat);
        }
        if (rows == 0) {
            return new NDArray(new float[0], 0, nOut);
        }
        return new NDArray(out, rows, out.length / rows);
    }

    // ---- stateful inference (rnnTimeStep) -----------------------------------------------------

    /**
     * Runs the network over the next time step(s) from the state the previous call left (the
     * reference's {@code rnnTimeStep}): each recurrent layer starts from its stored state and stores
     * its new one. A 2-D input {@code [N, C]} is one step and gives a 2-D output {@code [N, nOut]}; a
     * 3-D input {@code [N, C, T]} gives {@code [N, nOut, T]} (for a network with a time-series output).
     * The state belongs to this network object only; {@link #output}, {@link #fit} and
     * {@link #score} neither read nor change it. A minibatch size different from the stored state's
     * is refused; call {@link #rnnClearPreviousState()} first.
     *
     * @param input one step {@code [N, C]} or several {@code [N, C, T]}
     * @return the output for those steps
     */
    public INDArray rnnTimeStep(INDArray input) {
        long h = handle();
        Objects.requireNonNull(input, "input");
        if (input.rank() != 2 && input.rank() != 3) {
            throw new DL4JInvalidInputException("rnnTimeStep takes one step [examples, size] or a time series "
                    + "[examples, size, timeSteps], got shape " + Arrays.toString(input.shape()));
        }
        int rows = Math.toIntExact(input.size(0));
        float[] out = NativeNetwork.rnnTimeStep(h, NDArray.internalData(input), rows,
                RecurrentArrays.rowWidth(input, rows));
        rnnStateRows = rows;
        if (recurrentOutput && input.rank() == 2) {
            return new NDArray(out, rows, rows == 0 ? nOut : out.length / rows);
        }
        return shapeOutput(out, rows);
    }

    /** Forgets the state {@link #rnnTimeStep} stored in every recurrent layer. */
    public void rnnClearPreviousState() {
        NativeNetwork.rnnClearPreviousState(handle());
        rnnStateRows = 0;
    }

    /**
     * The state layer {@code layer} stored at the last {@link #rnnTimeStep} (the reference's map:
     * for an LSTM {@code "prevAct"} and {@code "prevMem"}, each {@code [N, nOut]}); empty when none is
     * stored.
     *
     * @param layer the layer index
     * @return a copy of the state
     * @throws IllegalArgumentException when the layer is not recurrent
     */
    public Map<String, INDArray> rnnGetPreviousState(int layer) {
        long h = handle();
        String[] keys = stateKeys(h, layer);
        return RecurrentArrays.stateMap(keys, k -> NativeNetwork.rnnGetPreviousState(h, layer, k), rnnStateRows);
    }

    /**
     * Replaces the stored state of layer {@code layer} (values as {@link #rnnGetPreviousState}
     * returns them; a key the layer does not have is refused naming the keys it has).
     *
     * @param layer the layer index
     * @param state key to {@code [N, size]} values
     * @throws IllegalArgumentException when the layer is not recurrent
     */
    public void rnnSetPreviousState(int layer, Map<String, INDArray> state) {
        long h = handle();
        Objects.requireNonNull(state, "state");
        stateKeys(h, layer);
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
            NativeNetwork.rnnSetPreviousState(h, layer, e.getKey(), NDArray.internalData(e.getValue()), rows);
        }
        if (rows >= 0) {
            rnnStateRows = rows;
        }
    }

    private String[] stateKeys(long h, int layer) {
        String[] keys = NativeNetwork.rnnStateKeys(h, layer);
        if (keys == null || keys.length == 0) {
            throw new IllegalArgumentException("layer " + layer + " (" + conf.getLayers().get(layer).getClass()
                    .getSimpleName() + ") is not a recurrent layer: it keeps no state between rnnTimeStep calls");
        }
        return keys;
    }

    /** @return the score of the last minibatch fitted (before its update); NaN before any fit */
    @Override
    public double score() {
        ensureOpen();
        return score;
    }

    /**
     * @param data features, labels and optional labels mask
     * @return the score (mean loss + regularization) of {@code data}, without training
     */
    public double score(DataSet data) {
        return score(data, false);
    }

    /**
     * @param data features, labels and optional labels mask
     * @param training ignored: dense layers behave the same in training and inference
     * @return the score of {@code data}
     */
    public double score(DataSet data, boolean training) {
        long h = handle();
        Batch b = new Batch(data);
        return NativeNetwork.score(h, b.f, b.rows, b.fCols, b.l, b.lCols, b.fMask, b.fMaskCols, b.mask, b.maskCols);
    }

    /**
     * The score of each example, in inference mode (the network does not change). Without
     * regularization the mean of the scores equals {@link #score(DataSet)} of a network with no
     * L1/L2 (for {@code miniBatch=true}); with it, every example's score also carries the whole
     * L1/L2 term (not divided by the number of examples). A labels mask multiplies each example's
     * per-output losses, so a fully masked example scores 0.
     *
     * @param data features, labels and optional labels mask
     * @param addRegularizationTerms whether to add the L1/L2 term to each score
     * @return a column vector {@code [N, 1]} of scores
     */
    public INDArray scoreExamples(DataSet data, boolean addRegularizationTerms) {
        long h = handle();
        Batch b = new Batch(data);
        double[] s = NativeNetwork.scoreExamples(h, b.f, b.rows, b.fCols, b.l, b.lCols, b.fMask, b.fMaskCols, b.mask,
                b.maskCols, addRegularizationTerms);
        float[] out = new float[s.length];
        for (int i = 0; i < s.length; i++) {
            out[i] = (float) s[i];
        }
        return new NDArray(out, out.length, 1);
    }

    /**
     * {@link #scoreExamples(DataSet, boolean)} over every minibatch of an iterator (reset first when
     * it is exhausted and resettable), stacked in order.
     *
     * @param iterator the data
     * @param addRegularizationTerms whether to add the L1/L2 term to each score
     * @return a column vector {@code [N, 1]} with one score per example
     */
    public INDArray scoreExamples(DataSetIterator iterator, boolean addRegularizationTerms) {
        handle();
        if (!iterator.hasNext() && iterator.resetSupported()) {
            iterator.reset();
        }
        List<float[]> parts = new ArrayList<>();
        int total = 0;
        while (iterator.hasNext()) {
            float[] part = NDArray.internalData(scoreExamples(iterator.next(), addRegularizationTerms));
            parts.add(part);
            total = Math.addExact(total, part.length);
        }
        float[] all = new float[total];
        int at = 0;
        for (float[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        return new NDArray(all, total, 1);
    }

    /** @param score the value {@link #score()} returns until the next fit */
    public void setScore(double score) {
        this.score = score;
    }

    /** @return a copy of the flat parameter vector, shape {@code [1, numParams]} */
    @Override
    public INDArray params() {
        float[] p = NativeNetwork.params(handle());
        return new NDArray(p, 1, p.length);
    }

    /** @param params flat parameter vector of length {@link #numParams()} (any shape) */
    @Override
    public void setParams(INDArray params) {
        long h = handle();
        NativeNetwork.setParams(h, NDArray.internalData(params));
    }

    /** @return the number of parameters */
    @Override
    public long numParams() {
        return NativeNetwork.numParams(handle());
    }

    /** @return a copy of the flat updater state, shape {@code [1, n]} (n is 0 for plain SGD) */
    public INDArray getUpdaterState() {
        float[] s = NativeNetwork.updaterState(handle());
        return new NDArray(s, 1, s.length);
    }

    /** @param state flat updater state of the length {@link #getUpdaterState()} returns */
    public void setUpdaterState(INDArray state) {
        long h = handle();
        NativeNetwork.setUpdaterState(h, NDArray.internalData(state));
    }

    private long[] counters() {
        long[] c = NativeNetwork.counters(handle());
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
            NativeNetwork.setCounters(handle(), iteration, epoch);
        }
    }

    /**
     * @return the configuration, with the current iteration and epoch counters (a live object: the
     *     counters are refreshed on every call)
     */
    public MultiLayerConfiguration getLayerWiseConfigurations() {
        ensureOpen();
        if (hasHandle()) {
            long[] c = counters();
            conf.setIterationCount(Math.toIntExact(c[0]));
            conf.setEpochCount(Math.toIntExact(c[1]));
        }
        return conf;
    }

    /** @return number of layers */
    public int getnLayers() {
        return conf.getLayers().size();
    }

    // ---- listeners ---------------------------------------------------------------------------

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

    /**
     * Replaces the listeners (see {@link TrainingListener} for when each callback runs).
     *
     * @param listeners the new listeners, called in this order; none or null clears them
     * @throws NullPointerException for a null element
     */
    @Override
    public void setListeners(TrainingListener... listeners) {
        setListeners(listeners == null ? null : Arrays.asList(listeners));
    }

    /**
     * Replaces the listeners.
     *
     * @param listeners the new listeners, called in iteration order; null clears them
     * @throws NullPointerException for a null element
     */
    @Override
    public void setListeners(Collection<TrainingListener> listeners) {
        ensureOpen();
        List<TrainingListener> ls = listeners == null ? new ArrayList<>() : checked(listeners);
        this.listeners = ls;
    }

    /**
     * Adds listeners after the current ones.
     *
     * @param listeners listeners to add
     * @throws NullPointerException for a null element
     */
    @Override
    public void addListeners(TrainingListener... listeners) {
        ensureOpen();
        if (listeners != null) {
            listeners().addAll(checked(Arrays.asList(listeners)));
        }
    }

    /** @return the listeners in call order (a read-only view) */
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

    /**
     * @return milliseconds spent in {@code iterator.next()} for the last minibatch fitted by
     *     {@link #fit(DataSetIterator)}; 0 when the last minibatch was given to {@link #fit(DataSet)}
     */
    public long getLastEtlTime() {
        return lastEtlTimeMs;
    }

    // ---- layers and parameters ---------------------------------------------------------------

    /** The engine's description of this network; before {@link #init()} from a temporary handle. */
    NetworkInfo info() {
        ensureOpen();
        if (info != null) {
            return info;
        }
        if (hasHandle()) {
            long h = handle();
            info = new NetworkInfo(NativeNetwork.layerInfo(h), NativeNetwork.paramTable(h));
            return info;
        }
        NativeLoader.load();
        long h = NativeNetwork.create(conf.toJson());
        try {
            return new NetworkInfo(NativeNetwork.layerInfo(h), NativeNetwork.paramTable(h));
        } finally {
            NativeNetwork.destroy(h);
        }
    }

    /**
     * Every parameter by the reference's key {@code "<layer index>_<name>"} ({@code 0_W},
     * {@code 0_b}, {@code 1_W}, ...; batch normalization: {@code gamma}, {@code beta},
     * {@code mean}, {@code var}), in the layout order of {@link #params()}. Weights keep their
     * shape ({@code [nIn, nOut]} dense, {@code [nOut, nIn, kH, kW]} convolution); one-dimensional
     * blocks such as biases are row vectors {@code [1, n]}, as in the reference.
     *
     * <p>The arrays are <b>copies</b>, not views: changing them does not change the network (use
     * {@link #setParam(String, INDArray)} or {@link #setParams(INDArray)}).
     *
     * @return a new, modifiable map in layout order
     */
    public Map<String, INDArray> paramTable() {
        long h = handle();
        NetworkInfo ni = info();
        float[] p = NativeNetwork.params(h);
        Map<String, INDArray> out = new LinkedHashMap<>();
        for (ParamEntry e : ni.params) {
            out.put(e.key, e.slice(p));
        }
        return out;
    }

    private ParamEntry entry(String key) {
        ParamEntry e = info().byKey.get(key);
        if (e == null) {
            throw new IllegalArgumentException("no parameter \"" + key + "\" in this network; its keys are "
                    + info().byKey.keySet());
        }
        return e;
    }

    /**
     * @param key a key of {@link #paramTable()}, e.g. {@code "0_W"}
     * @return a copy of that parameter, shaped as in {@link #paramTable()}
     * @throws IllegalArgumentException for an unknown key
     */
    public INDArray getParam(String key) {
        long h = handle();
        ParamEntry e = entry(key);
        return e.slice(NativeNetwork.params(h));
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
        float[] p = NativeNetwork.params(h);
        System.arraycopy(NDArray.internalData(value), 0, p, e.offset, e.length);
        NativeNetwork.setParams(h, p);
    }

    /**
     * @param i layer index, {@code 0 <= i < getnLayers()}
     * @return a read-only view of layer {@code i}
     * @throws IllegalArgumentException for an index out of range
     * @throws NativeStateException before {@link #init()} or after {@link #close()}
     */
    public Layer getLayer(int i) {
        handle();
        List<LayerEntry> ls = info().layers;
        if (i < 0 || i >= ls.size()) {
            throw new IllegalArgumentException("layer index " + i + " is out of range: this network has "
                    + ls.size() + " layers (0.." + (ls.size() - 1) + ")");
        }
        return view(ls.get(i));
    }

    /**
     * @param name a layer name: the configured one, or {@code "layer" + index} for an unnamed layer
     * @return a read-only view of that layer
     * @throws IllegalArgumentException when no layer has that name
     */
    public Layer getLayer(String name) {
        handle();
        for (LayerEntry e : info().layers) {
            if (e.displayName().equals(name)) {
                return view(e);
            }
        }
        List<String> names = new ArrayList<>();
        for (LayerEntry e : info().layers) {
            names.add(e.displayName());
        }
        throw new IllegalArgumentException("no layer named \"" + name + "\"; the layers are " + names);
    }

    /** @return read-only views of all layers, in order */
    public Layer[] getLayers() {
        handle();
        List<LayerEntry> ls = info().layers;
        Layer[] out = new Layer[ls.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = view(ls.get(i));
        }
        return out;
    }

    private Layer view(LayerEntry e) {
        return new LayerView(e, () -> NativeNetwork.params(handle()),
                () -> getLayerWiseConfigurations().getConf(e.index));
    }

    /**
     * @param layerNumber layer index
     * @return the current learning rate of the layer's weights (its schedule applied at the current
     *     iteration and epoch), or null for a layer without parameters
     * @throws org.ferrodl.exception.DL4JInvalidInputException for an index out of range
     */
    public Double getLearningRate(int layerNumber) {
        double lr = NativeNetwork.learningRate(handle(), layerNumber);
        return Double.isNaN(lr) ? null : lr;
    }

    /**
     * A table of the layers: index, name and type, {@code nIn -> nOut}, activation (the output
     * layer's with its loss function), parameter count and shapes, per-example input and output
     * shapes; then the total, trainable and frozen parameter counts. Works before {@link #init()}
     * too (the engine builds a temporary network to describe it).
     *
     * @return the table, one line per layer
     */
    public String summary() {
        return SummaryTable.layers(info());
    }

    /**
     * Evaluates classification performance (the iterator is reset first when it supports reset).
     *
     * @param iterator the data
     * @return the evaluation
     */
    public Evaluation evaluate(DataSetIterator iterator) {
        handle();
        if (iterator.resetSupported()) {
            iterator.reset();
        }
        Evaluation e = new Evaluation(nOut);
        while (iterator.hasNext()) {
            DataSet d = iterator.next();
            INDArray out = output(d.getFeatures(), false, d.getFeaturesMaskArray(), d.getLabelsMaskArray());
            RecurrentArrays.eval(e, d.getLabels(), out, d.getLabelsMaskArray(), outputFormat);
        }
        return e;
    }

    /**
     * Evaluates regression performance (the iterator is reset first when it supports reset): the
     * inference-mode output of every minibatch against its labels, honouring labels masks (per
     * example or per output).
     *
     * @param iterator the data
     * @return the evaluation, columns named {@code col_0}, {@code col_1}, ...
     * @throws IllegalStateException when the network is a classifier (SOFTMAX output)
     */
    public RegressionEvaluation evaluateRegression(DataSetIterator iterator) {
        return evaluateRegression(iterator, null);
    }

    /**
     * @param iterator the data
     * @param columnNames one name per output column, or null for {@code col_0}, {@code col_1}, ...
     * @return the evaluation
     * @throws IllegalStateException when the network is a classifier (SOFTMAX output)
     * @see #evaluateRegression(DataSetIterator)
     */
    public RegressionEvaluation evaluateRegression(DataSetIterator iterator, List<String> columnNames) {
        handle();
        List<LayerEntry> ls = info().layers;
        String act = ls.get(ls.size() - 1).outputActivation;
        if ("SOFTMAX".equals(act)) {
            throw new IllegalStateException("this network is a classifier (SOFTMAX output): evaluate it with "
                    + "evaluate(DataSetIterator), not with a RegressionEvaluation");
        }
        if (iterator.resetSupported()) {
            iterator.reset();
        }
        RegressionEvaluation e = columnNames == null ? new RegressionEvaluation(nOut)
                : new RegressionEvaluation(columnNames);
        while (iterator.hasNext()) {
            DataSet d = iterator.next();
            INDArray out = output(d.getFeatures(), false, d.getFeaturesMaskArray(), d.getLabelsMaskArray());
            RecurrentArrays.eval(e, d.getLabels(), out, d.getLabelsMaskArray(), outputFormat);
        }
        return e;
    }

    /**
     * Saves configuration, parameters and updater state.
     *
     * @param f destination file
     * @throws IOException on a write error
     * @see #save(File, boolean)
     */
    public void save(File f) throws IOException {
        save(f, true);
    }

    /**
     * Saves the network as a ZIP with {@code ferrodl-model.properties} (format version, ferrodl
     * version), {@code configuration.json} (with counters), {@code coefficients.bin} and, when
     * {@code saveUpdater}, {@code updaterState.bin}. The vector files are big-endian: int magic
     * {@code "FDLV"}, long count, then {@code count} floats. The file is written through a temporary
     * file in the same directory and then renamed.
     *
     * @param f destination file
     * @param saveUpdater whether to include the updater state
     * @throws IOException on a write error
     */
    public void save(File f, boolean saveUpdater) throws IOException {
        handle();
        ModelSerializer.writeModel(this, f, saveUpdater);
    }

    /**
     * Loads a network written by {@link #save(File, boolean)}.
     *
     * @param f the model file
     * @param loadUpdater whether to restore the updater state (when the file has one)
     * @return the initialized network
     * @throws IOException when the file cannot be read or is not a valid ferrodl model (the message
     *     names the file and the problem)
     */
    public static MultiLayerNetwork load(File f, boolean loadUpdater) throws IOException {
        return ModelSerializer.restoreMultiLayerNetwork(f, loadUpdater);
    }

    /**
     * Loads a network with its updater state.
     *
     * @param f the model file
     * @return the initialized network
     * @throws IOException when the file is missing or invalid
     */
    public static MultiLayerNetwork load(File f) throws IOException {
        return load(f, true);
    }

    /**
     * @return an independent, initialized copy (configuration, parameters, updater state, counters
     *     and score); must be closed separately
     */
    @Override
    public MultiLayerNetwork clone() {
        MultiLayerNetwork c = new MultiLayerNetwork(getLayerWiseConfigurations());
        if (hasHandle()) {
            c.init();
            long h = handle();
            NativeNetwork.setParams(c.handle(), NativeNetwork.params(h));
            NativeNetwork.setUpdaterState(c.handle(), NativeNetwork.updaterState(h));
            long[] counters = counters();
            NativeNetwork.setCounters(c.handle(), counters[0], counters[1]);
        }
        c.score = score;
        return c;
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        boolean initialized = hasHandle();
        out.writeUTF(initialized ? "init" : "conf");
        writeLongString(out, getLayerWiseConfigurations().toJson());
        out.writeDouble(score);
        if (initialized) {
            out.writeObject(NativeNetwork.params(handle()));
            out.writeObject(NativeNetwork.updaterState(handle()));
        }
    }

    private static void writeLongString(ObjectOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String readLongString(ObjectInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            throw new java.io.InvalidObjectException("negative string length");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        String mode = in.readUTF();
        MultiLayerConfiguration c = MultiLayerConfiguration.fromJson(readLongString(in));
        this.conf = c;
        readDims(c);
        this.score = in.readDouble();
        if ("init".equals(mode)) {
            float[] params = (float[]) in.readObject();
            float[] upd = (float[]) in.readObject();
            init();
            NativeNetwork.setParams(handle(), params);
            NativeNetwork.setUpdaterState(handle(), upd);
            NativeNetwork.setCounters(handle(), c.getIterationCount(), c.getEpochCount());
        }
    }

    /** @return the number of inputs of the first layer */
    public int numInputs() {
        return nIn;
    }

    /** @return the number of outputs of the last layer */
    public int numOutputs() {
        return nOut;
    }

    @Override
    public String toString() {
        return "MultiLayerNetwork(layers=" + conf.getLayers().size() + ", nIn=" + nIn + ", nOut=" + nOut
                + (isClosed() ? ", closed" : !hasHandle() ? ", not initialized" : "") + ")";
    }
}
