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
import java.util.Arrays;
import java.util.Objects;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.jni.NativeLoader;
import org.ferrodl.jni.NativeNetwork;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.conf.MultiLayerConfiguration;

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
 * <p><b>Not thread-safe.</b> Use one network per thread (see {@link #clone()}). Concurrent calls
 * cannot corrupt native memory (the engine serializes calls per handle) but their interleaving is
 * unspecified.
 */
public class MultiLayerNetwork implements AutoCloseable, Serializable, Cloneable {
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
        org.ferrodl.nn.conf.layers.FeedForwardLayer first =
                (org.ferrodl.nn.conf.layers.FeedForwardLayer) c.getLayers().get(0);
        org.ferrodl.nn.conf.layers.FeedForwardLayer last =
                (org.ferrodl.nn.conf.layers.FeedForwardLayer) c.getLayers().get(c.getLayers().size() - 1);
        return new FeedForwardDims(Math.toIntExact(first.getNIn()), Math.toIntExact(last.getNOut()));
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

    /**
     * One training iteration on one minibatch (the iteration counter grows by one). The features
     * mask, if any, is not used by dense layers; the labels mask is.
     *
     * @param data features {@code N × nIn}, labels {@code N × nOut}, optional labels mask
     *     ({@code N × 1} or {@code N × nOut})
     * @throws DL4JInvalidInputException for wrong widths, mismatched rows or NaN/infinite values
     */
    public void fit(DataSet data) {
        long h = handle();
        INDArray f = data.getFeatures();
        INDArray l = data.getLabels();
        int rows = rowsOf(f, "features");
        int lRows = rowsOf(l, "labels");
        if (lRows != rows) {
            throw new DL4JInvalidInputException("labels have " + lRows + " rows but features have " + rows);
        }
        INDArray m = data.getLabelsMaskArray();
        float[] mask = m == null ? null : NDArray.internalData(m);
        int maskCols = m == null ? 0 : (m.rank() == 1 ? 1 : colsOf(m));
        score = NativeNetwork.fit(h, NDArray.internalData(f), rows, colsOf(f), NDArray.internalData(l), colsOf(l),
                mask, maskCols);
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
     * resettable), then increments the epoch counter.
     *
     * @param iterator the data
     */
    public void fit(DataSetIterator iterator) {
        handle();
        if (!iterator.hasNext() && iterator.resetSupported()) {
            iterator.reset();
        }
        while (iterator.hasNext()) {
            fit(iterator.next());
        }
        incrementEpochCount();
    }

    /**
     * {@code numEpochs} epochs; the iterator is reset between epochs (so it must support reset when
     * {@code numEpochs > 1}). The epoch counter grows by one per epoch.
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
        INDArray f = data.getFeatures();
        INDArray l = data.getLabels();
        int rows = rowsOf(f, "features");
        int lRows = rowsOf(l, "labels");
        if (lRows != rows) {
            throw new DL4JInvalidInputException("labels have " + lRows + " rows but features have " + rows);
        }
        INDArray m = data.getLabelsMaskArray();
        return NativeNetwork.score(h, NDArray.internalData(f), rows, colsOf(f), NDArray.internalData(l), colsOf(l),
                m == null ? null : NDArray.internalData(m), m == null ? 0 : (m.rank() == 1 ? 1 : colsOf(m)));
    }

    /** @param score the value {@link #score()} returns until the next fit */
    public void setScore(double score) {
        this.score = score;
    }

    /** @return a copy of the flat parameter vector, shape {@code [1, numParams]} */
    public INDArray params() {
        float[] p = NativeNetwork.params(handle());
        return new NDArray(p, 1, p.length);
    }

    /** @param params flat parameter vector of length {@link #numParams()} (any shape) */
    public void setParams(INDArray params) {
        long h = handle();
        NativeNetwork.setParams(h, NDArray.internalData(params));
    }

    /** @return the number of parameters */
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
