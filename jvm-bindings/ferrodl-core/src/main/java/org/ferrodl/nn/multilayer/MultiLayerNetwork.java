package org.ferrodl.nn.multilayer;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidConfigException;
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
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.optimize.api.TrainingListener;

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
 * closed"). A {@link Cleaner} releases the handle of a network that becomes unreachable without
 * being closed, but only as a safety net: close networks explicitly.
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
public class MultiLayerNetwork implements Model, AutoCloseable, Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** Version of the model ZIP format written by {@link #save(File, boolean)}. */
    public static final int MODEL_FORMAT_VERSION = 1;
    /** ZIP entry holding the configuration JSON. */
    public static final String CONFIGURATION_JSON = "configuration.json";
    /** ZIP entry holding the parameters. */
    public static final String COEFFICIENTS_BIN = "coefficients.bin";
    /** ZIP entry holding the updater state (optional). */
    public static final String UPDATER_BIN = "updaterState.bin";
    /** ZIP entry holding the format properties. */
    public static final String MODEL_PROPERTIES = "ferrodl-model.properties";
    /** Magic number at the start of {@code coefficients.bin} and {@code updaterState.bin} ("FDLV"). */
    static final int VECTOR_MAGIC = 0x46444C56;

    private static final Cleaner CLEANER = Cleaner.create();

    private transient MultiLayerConfiguration conf;
    private transient HandleState state;
    private transient Cleaner.Cleanable cleanable;
    private transient boolean closed;
    private transient double score = Double.NaN;
    private transient int nIn;
    private transient int nOut;
    private transient List<TrainingListener> listeners;
    private transient int lastBatchSize;
    private transient long lastEtlTimeMs;
    /** Layer and parameter descriptions from the engine; fixed for the life of a handle. */
    private transient NetworkInfo info;

    /** Holds the native handle; the Cleaner's action. Must not reference the network. */
    private static final class HandleState implements Runnable {
        private volatile long handle;

        HandleState(long handle) {
            this.handle = handle;
        }

        @Override
        public synchronized void run() {
            long h = handle;
            handle = 0;
            if (h != 0) {
                NativeNetwork.destroy(h);
            }
        }
    }

    /**
     * Creates an uninitialized network; call {@link #init()} before use.
     *
     * @param conf the configuration (copied)
     */
    public MultiLayerNetwork(MultiLayerConfiguration conf) {
        this.conf = Objects.requireNonNull(conf, "conf").clone();
        this.conf.validate();
        FeedForwardDims d = dims(this.conf);
        this.nIn = d.nIn;
        this.nOut = d.nOut;
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
        // values per example of the input and the output, whatever the layer types
        return new FeedForwardDims(Math.toIntExact(c.getInputSize()), Math.toIntExact(c.getOutputSize()));
    }

    /**
     * Creates the native network and initializes its parameters from the configuration's seed.
     * Does nothing when already initialized.
     */
    public void init() {
        ensureOpen();
        if (state != null) {
            return;
        }
        NativeLoader.load();
        long h = NativeNetwork.create(conf.toJson());
        if (h == 0) {
            throw new NativeStateException("native network creation returned a null handle");
        }
        state = new HandleState(h);
        cleanable = CLEANER.register(this, state);
    }

    /**
     * Initializes, then sets the parameters.
     *
     * @param parameters flat parameter vector of length {@link #numParams()}, or null for seeded init
     * @param cloneParametersArray ignored: parameters are always copied into the native network
     */
    public void init(INDArray parameters, boolean cloneParametersArray) {
        init();
        if (parameters != null) {
            setParams(parameters);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new NativeStateException("network is closed");
        }
    }

    private long handle() {
        ensureOpen();
        if (state == null) {
            throw new NativeStateException("network is not initialized: call init() first");
        }
        long h = state.handle;
        if (h == 0) {
            throw new NativeStateException("network is closed");
        }
        return h;
    }

    /** @return true once {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    /** @return true after {@link #init()} and before {@link #close()} */
    public boolean isInitCalled() {
        return state != null && !closed;
    }

    /**
     * Releases the native network. Idempotent; afterwards every other method throws
     * {@link NativeStateException}.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (cleanable != null) {
            cleanable.clean();
        }
    }

    private static int rowsOf(INDArray a, String what) {
        if (a == null) {
            throw new DL4JInvalidInputException(what + " must not be null");
        }
        if (a.rank() != 2) {
            throw new DL4JInvalidInputException(what + " must be a matrix [examples, columns], got shape "
                    + Arrays.toString(a.shape()));
        }
        return Math.toIntExact(a.size(0));
    }

    private static int colsOf(INDArray a) {
        return Math.toIntExact(a.size(1));
    }

    /** Features, labels and labels mask of one call, as the native methods take them. */
    private static final class Batch {
        final float[] f;
        final int rows;
        final int fCols;
        final float[] l;
        final int lCols;
        final float[] mask;
        final int maskCols;

        Batch(DataSet data) {
            if (data == null) {
                throw new DL4JInvalidInputException("the DataSet must not be null");
            }
            INDArray fa = data.getFeatures();
            INDArray la = data.getLabels();
            rows = rowsOf(fa, "features");
            int lRows = rowsOf(la, "labels");
            if (lRows != rows) {
                throw new DL4JInvalidInputException("labels have " + lRows + " rows but features have " + rows);
            }
            INDArray m = data.getLabelsMaskArray();
            f = NDArray.internalData(fa);
            fCols = colsOf(fa);
            l = NDArray.internalData(la);
            lCols = colsOf(la);
            mask = m == null ? null : NDArray.internalData(m);
            maskCols = m == null ? 0 : (m.rank() == 1 ? 1 : colsOf(m));
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
        score = NativeNetwork.fit(h, b.f, b.rows, b.fCols, b.l, b.lCols, b.mask, b.maskCols);
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
        long h = handle();
        int rows = rowsOf(input, "features");
        float[] out = NativeNetwork.output(h, NDArray.internalData(input), rows, colsOf(input), train);
        if (rows == 0) {
            return new NDArray(new float[0], 0, nOut);
        }
        return new NDArray(out, rows, out.length / rows);
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
        return NativeNetwork.score(h, b.f, b.rows, b.fCols, b.l, b.lCols, b.mask, b.maskCols);
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
        double[] s = NativeNetwork.scoreExamples(h, b.f, b.rows, b.fCols, b.l, b.lCols, b.mask, b.maskCols,
                addRegularizationTerms);
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
        if (state == null) {
            ensureOpen();
            return conf.getIterationCount();
        }
        return Math.toIntExact(counters()[0]);
    }

    /** @return the number of completed epochs */
    public int getEpochCount() {
        if (state == null) {
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
        if (state == null) {
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
        if (state != null) {
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

    /** One parameter block: key {@code "<layer>_<name>"}, position in {@code params()}, shape. */
    static final class ParamEntry {
        final String key;
        final int layer;
        final String name;
        final int offset;
        final int length;
        /** The reference's shape: rank-1 blocks become row vectors {@code [1, n]}. */
        final long[] shape;

        ParamEntry(String key, int offset, int length, long[] engineShape) {
            this.key = key;
            int cut = key.indexOf('_');
            this.layer = Integer.parseInt(key.substring(0, cut));
            this.name = key.substring(cut + 1);
            this.offset = offset;
            this.length = length;
            this.shape = engineShape.length == 1 ? new long[] {1, engineShape[0]} : engineShape.clone();
        }
    }

    /** What the engine reports about one layer (NativeNetwork.layerInfo). */
    static final class LayerEntry {
        final int index;
        final String type;
        final String innerType;
        final String name;
        final boolean frozen;
        final Long nIn;
        final Long nOut;
        final long[] inputShape;
        final long[] outputShape;
        final long numParams;
        final String activation;
        final String lossFunction;
        final String outputActivation;
        final List<ParamEntry> params = new ArrayList<>();

        LayerEntry(JsonNode n) {
            index = n.get("index").asInt();
            type = n.get("type").asText();
            innerType = n.get("innerType").asText();
            name = n.get("name").isNull() ? null : n.get("name").asText();
            frozen = n.get("frozen").asBoolean();
            nIn = n.get("nIn").isNull() ? null : n.get("nIn").asLong();
            nOut = n.get("nOut").isNull() ? null : n.get("nOut").asLong();
            inputShape = longs(n.get("inputShape"));
            outputShape = longs(n.get("outputShape"));
            numParams = n.get("numParams").asLong();
            activation = text(n.get("activation"));
            lossFunction = text(n.get("lossFunction"));
            outputActivation = text(n.get("outputActivation"));
        }

        /** @return the configured name, or {@code "layer" + index} */
        String displayName() {
            return name != null ? name : "layer" + index;
        }

        private static String text(JsonNode n) {
            return n == null || n.isNull() ? null : n.asText();
        }
    }

    private static long[] longs(JsonNode a) {
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asLong();
        }
        return out;
    }

    /** Parsed layer and parameter tables of one native network. */
    static final class NetworkInfo {
        final List<LayerEntry> layers = new ArrayList<>();
        final List<ParamEntry> params = new ArrayList<>();
        final Map<String, ParamEntry> byKey = new LinkedHashMap<>();

        NetworkInfo(String layerJson, String paramJson) {
            ObjectMapper m = new ObjectMapper();
            try {
                for (JsonNode n : m.readTree(layerJson)) {
                    layers.add(new LayerEntry(n));
                }
                for (JsonNode n : m.readTree(paramJson)) {
                    ParamEntry e = new ParamEntry(n.get("key").asText(), n.get("offset").asInt(),
                            n.get("length").asInt(), longs(n.get("shape")));
                    params.add(e);
                    byKey.put(e.key, e);
                    layers.get(e.layer).params.add(e);
                }
            } catch (JsonProcessingException | RuntimeException e) {
                throw new NativeStateException("cannot read the native layer/parameter tables: " + e.getMessage());
            }
        }
    }

    /** The engine's description of this network; before {@link #init()} from a temporary handle. */
    NetworkInfo info() {
        ensureOpen();
        if (info != null) {
            return info;
        }
        if (state != null) {
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

    private static INDArray slice(float[] p, ParamEntry e) {
        return new NDArray(Arrays.copyOfRange(p, e.offset, e.offset + e.length), e.shape);
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
            out.put(e.key, slice(p, e));
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
        return slice(NativeNetwork.params(h), e);
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
        return new LayerView(this, ls.get(i));
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
                return new LayerView(this, e);
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
            out[i] = new LayerView(this, ls.get(i));
        }
        return out;
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

    /** Reads through to the network; see {@link Layer}. */
    private static final class LayerView implements Layer {
        private final MultiLayerNetwork net;
        private final LayerEntry e;

        LayerView(MultiLayerNetwork net, LayerEntry e) {
            this.net = net;
            this.e = e;
        }

        @Override
        public int getIndex() {
            return e.index;
        }

        @Override
        public Type type() {
            return typeOf(e.innerType);
        }

        @Override
        public String getLayerName() {
            return e.displayName();
        }

        @Override
        public String getLayerType() {
            return e.type;
        }

        @Override
        public boolean isFrozen() {
            return e.frozen;
        }

        @Override
        public org.ferrodl.nn.conf.NeuralNetConfiguration conf() {
            return net.getLayerWiseConfigurations().getConf(e.index);
        }

        @Override
        public long[] getInputShape() {
            return e.inputShape.clone();
        }

        @Override
        public long[] getOutputShape() {
            return e.outputShape.clone();
        }

        @Override
        public String getActivation() {
            return e.activation;
        }

        @Override
        public long numParams() {
            return e.numParams;
        }

        @Override
        public INDArray params() {
            float[] p = NativeNetwork.params(net.handle());
            int from = e.params.isEmpty() ? 0 : e.params.get(0).offset;
            return new NDArray(Arrays.copyOfRange(p, from, from + Math.toIntExact(e.numParams)), 1, e.numParams);
        }

        @Override
        public Map<String, INDArray> paramTable() {
            float[] p = NativeNetwork.params(net.handle());
            Map<String, INDArray> out = new LinkedHashMap<>();
            for (ParamEntry pe : e.params) {
                out.put(pe.name, slice(p, pe));
            }
            return out;
        }

        @Override
        public INDArray getParam(String param) {
            for (ParamEntry pe : e.params) {
                if (pe.name.equals(param)) {
                    return slice(NativeNetwork.params(net.handle()), pe);
                }
            }
            List<String> names = new ArrayList<>();
            for (ParamEntry pe : e.params) {
                names.add(pe.name);
            }
            throw new IllegalArgumentException("layer " + e.index + " (" + e.type + ") has no parameter \"" + param
                    + "\"; its parameters are " + names);
        }

        @Override
        public String toString() {
            return "Layer(" + e.index + ", " + e.displayName() + ", " + e.type + ", params=" + e.numParams + ")";
        }
    }

    static Layer.Type typeOf(String configType) {
        switch (configType) {
            case "ConvolutionLayer":
            case "Convolution1DLayer":
            case "ZeroPaddingLayer":
                return Layer.Type.CONVOLUTIONAL;
            case "SubsamplingLayer":
            case "Subsampling1DLayer":
            case "GlobalPoolingLayer":
                return Layer.Type.SUBSAMPLING;
            case "Upsampling2D":
                return Layer.Type.UPSAMPLING;
            case "BatchNormalization":
                return Layer.Type.NORMALIZATION;
            default:
                return Layer.Type.FEED_FORWARD;
        }
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
        NetworkInfo ni = info();
        String[] head = {"#", "LayerName (LayerType)", "nIn -> nOut", "Activation", "Params", "ParamShapes",
            "Input -> Output"};
        List<String[]> rows = new ArrayList<>();
        long total = 0;
        long frozen = 0;
        for (LayerEntry e : ni.layers) {
            String type = e.frozen ? e.type + ":" + e.innerType : e.type;
            String io = e.nIn == null ? "-" : e.nIn + " -> " + e.nOut;
            String act = e.activation == null ? "-" : e.activation;
            if (e.lossFunction != null) {
                act = (e.outputActivation != null ? e.outputActivation : act) + " / " + e.lossFunction;
            }
            StringBuilder shapes = new StringBuilder();
            for (ParamEntry p : e.params) {
                if (shapes.length() > 0) {
                    shapes.append(", ");
                }
                shapes.append(p.name).append(':').append(shapeText(p.shape, '{', '}'));
            }
            rows.add(new String[] {Integer.toString(e.index), e.displayName() + " (" + type + ")", io, act,
                Long.toString(e.numParams), shapes.length() == 0 ? "-" : shapes.toString(),
                shapeText(e.inputShape, '[', ']') + " -> " + shapeText(e.outputShape, '[', ']')});
            total += e.numParams;
            if (e.frozen) {
                frozen += e.numParams;
            }
        }
        int[] w = new int[head.length];
        for (int k = 0; k < head.length; k++) {
            w[k] = head[k].length();
        }
        for (String[] r : rows) {
            for (int k = 0; k < r.length; k++) {
                w[k] = Math.max(w[k], r[k].length());
            }
        }
        int width = head.length * 2 - 2;
        for (int x : w) {
            width += x;
        }
        String rule = "=".repeat(width);
        StringBuilder b = new StringBuilder();
        b.append(rule).append('\n');
        appendRow(b, head, w);
        b.append(rule).append('\n');
        for (String[] r : rows) {
            appendRow(b, r, w);
        }
        b.append("-".repeat(width)).append('\n');
        b.append("Total parameters:     ").append(total).append('\n');
        b.append("Trainable parameters: ").append(total - frozen).append('\n');
        b.append("Frozen parameters:    ").append(frozen).append('\n');
        b.append(rule).append('\n');
        return b.toString();
    }

    private static void appendRow(StringBuilder b, String[] cells, int[] w) {
        StringBuilder line = new StringBuilder();
        for (int k = 0; k < cells.length; k++) {
            line.append(cells[k]);
            if (k + 1 < cells.length) {
                line.append(" ".repeat(w[k] - cells[k].length() + 2));
            }
        }
        b.append(line).append('\n');
    }

    private static String shapeText(long[] s, char open, char close) {
        StringBuilder b = new StringBuilder().append(open);
        for (int i = 0; i < s.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(s[i]);
        }
        return b.append(close).toString();
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
            INDArray out = output(d.getFeatures(), false);
            e.eval(d.getLabels(), out, d.getLabelsMaskArray());
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
            INDArray out = output(d.getFeatures(), false);
            e.eval(d.getLabels(), out, d.getLabelsMaskArray());
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
        String json = getLayerWiseConfigurations().toJson();
        float[] params = NativeNetwork.params(handle());
        float[] upd = saveUpdater ? NativeNetwork.updaterState(handle()) : null;
        File dir = f.getAbsoluteFile().getParentFile();
        File tmp = File.createTempFile(".ferrodl-model-", ".tmp", dir);
        try {
            try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(tmp.toPath()))) {
                Properties p = new Properties();
                p.setProperty("formatVersion", Integer.toString(MODEL_FORMAT_VERSION));
                p.setProperty("ferrodlVersion", NativeLoader.javaVersion());
                p.setProperty("modelType", "MultiLayerNetwork");
                p.setProperty("numParams", Integer.toString(params.length));
                p.setProperty("hasUpdaterState", Boolean.toString(upd != null));
                ByteArrayOutputStream props = new ByteArrayOutputStream();
                p.store(props, "ferrodl model");
                putEntry(zip, MODEL_PROPERTIES, props.toByteArray());
                putEntry(zip, CONFIGURATION_JSON, json.getBytes(StandardCharsets.UTF_8));
                zip.putNextEntry(new ZipEntry(COEFFICIENTS_BIN));
                writeVector(zip, params);
                zip.closeEntry();
                if (upd != null) {
                    zip.putNextEntry(new ZipEntry(UPDATER_BIN));
                    writeVector(zip, upd);
                    zip.closeEntry();
                }
            }
            Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp.toPath());
        }
    }

    private static void putEntry(ZipOutputStream zip, String name, byte[] bytes) throws IOException {
        zip.putNextEntry(new ZipEntry(name));
        zip.write(bytes);
        zip.closeEntry();
    }

    private static void writeVector(OutputStream out, float[] v) throws IOException {
        DataOutputStream d = new DataOutputStream(new java.io.BufferedOutputStream(out));
        d.writeInt(VECTOR_MAGIC);
        d.writeLong(v.length);
        for (float x : v) {
            d.writeFloat(x);
        }
        d.flush();
    }

    private static float[] readVector(InputStream in, File file, String entry) throws IOException {
        DataInputStream d = new DataInputStream(new java.io.BufferedInputStream(in));
        try {
            int magic = d.readInt();
            if (magic != VECTOR_MAGIC) {
                throw new IOException(file + ": entry " + entry + " is not a ferrodl vector (bad magic)");
            }
            long n = d.readLong();
            if (n < 0 || n > NDArray.MAX_LENGTH) {
                throw new IOException(file + ": entry " + entry + " declares an invalid length " + n);
            }
            float[] v = new float[(int) n];
            for (int i = 0; i < v.length; i++) {
                v[i] = d.readFloat();
            }
            if (d.read() != -1) {
                throw new IOException(file + ": entry " + entry + " has trailing bytes after " + n + " values");
            }
            return v;
        } catch (EOFException e) {
            throw new IOException(file + ": entry " + entry + " is truncated", e);
        }
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
        ZipFile zip;
        try {
            zip = new ZipFile(f);
        } catch (ZipException e) {
            throw new IOException(f + " is not a ferrodl model file (not a ZIP archive: " + e.getMessage() + ")", e);
        }
        try (ZipFile z = zip) {
            ZipEntry propsEntry = z.getEntry(MODEL_PROPERTIES);
            if (propsEntry == null) {
                throw new IOException(f + " is not a ferrodl model file (missing entry " + MODEL_PROPERTIES + ")");
            }
            Properties p = new Properties();
            try (InputStream in = z.getInputStream(propsEntry)) {
                p.load(in);
            }
            String fv = p.getProperty("formatVersion");
            if (!Integer.toString(MODEL_FORMAT_VERSION).equals(fv)) {
                throw new IOException(f + ": unsupported model format version " + fv + " (this ferrodl reads "
                        + MODEL_FORMAT_VERSION + ")");
            }
            ZipEntry confEntry = z.getEntry(CONFIGURATION_JSON);
            ZipEntry coefEntry = z.getEntry(COEFFICIENTS_BIN);
            if (confEntry == null || coefEntry == null) {
                throw new IOException(f + " is not a complete ferrodl model (missing entry "
                        + (confEntry == null ? CONFIGURATION_JSON : COEFFICIENTS_BIN) + ")");
            }
            String json;
            try (InputStream in = z.getInputStream(confEntry)) {
                json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            MultiLayerConfiguration conf;
            try {
                conf = MultiLayerConfiguration.fromJson(json);
            } catch (DL4JInvalidConfigException e) {
                throw new IOException(f + ": invalid " + CONFIGURATION_JSON + ": " + e.getMessage(), e);
            }
            float[] params;
            try (InputStream in = z.getInputStream(coefEntry)) {
                params = readVector(in, f, COEFFICIENTS_BIN);
            }
            float[] upd = null;
            ZipEntry updEntry = z.getEntry(UPDATER_BIN);
            if (loadUpdater && updEntry != null) {
                try (InputStream in = z.getInputStream(updEntry)) {
                    upd = readVector(in, f, UPDATER_BIN);
                }
            }
            MultiLayerNetwork net = new MultiLayerNetwork(conf);
            try {
                net.init();
                if (params.length != net.numParams()) {
                    throw new IOException(f + ": " + COEFFICIENTS_BIN + " has " + params.length
                            + " values but the configuration needs " + net.numParams());
                }
                NativeNetwork.setParams(net.handle(), params);
                NativeNetwork.setCounters(net.handle(), conf.getIterationCount(), conf.getEpochCount());
                if (upd != null) {
                    NativeNetwork.setUpdaterState(net.handle(), upd);
                }
                return net;
            } catch (IOException | RuntimeException e) {
                net.close();
                throw e;
            }
        }
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
        if (state != null) {
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
        boolean initialized = state != null;
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
        FeedForwardDims d = dims(c);
        this.nIn = d.nIn;
        this.nOut = d.nOut;
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
                + (closed ? ", closed" : state == null ? ", not initialized" : "") + ")";
    }
}
