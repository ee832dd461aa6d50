package org.ferrodl.util;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Objects;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.NativeMemoryException;
import org.ferrodl.jni.NativeLoader;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Saves and restores networks as a ZIP archive, as the reference's {@code ModelSerializer} does:
 *
 * <ul>
 *   <li>{@code ferrodl-model.properties}: {@code formatVersion} (1), {@code ferrodlVersion},
 *       {@code modelType} ({@code MultiLayerNetwork}; {@code ComputationGraph} for graphs),
 *       {@code numParams}, {@code hasUpdaterState};</li>
 *   <li>{@code configuration.json}: the configuration, with the iteration and epoch counters;</li>
 *   <li>{@code coefficients.bin}: the flat parameter vector;</li>
 *   <li>{@code updaterState.bin} (optional): the flat updater state.</li>
 * </ul>
 *
 * <p>The two vector entries are big-endian: int magic {@code "FDLV"}, long count, then
 * {@code count} floats. Every read checks the archive, the format version, the model type and every
 * length, and throws an {@link IOException} naming the file (or {@code "<stream>"}) and the problem.
 * Stateless and thread-safe.
 */
public final class ModelSerializer {
    /** Version of the model ZIP format written and read. */
    public static final int MODEL_FORMAT_VERSION = 1;
    /** ZIP entry holding the configuration JSON. */
    public static final String CONFIGURATION_JSON = "configuration.json";
    /** ZIP entry holding the parameters. */
    public static final String COEFFICIENTS_BIN = "coefficients.bin";
    /** ZIP entry holding the updater state (optional). */
    public static final String UPDATER_BIN = "updaterState.bin";
    /** ZIP entry holding the format properties. */
    public static final String MODEL_PROPERTIES = "ferrodl-model.properties";
    /** {@code modelType} of a MultiLayerNetwork. */
    public static final String TYPE_MULTI_LAYER_NETWORK = "MultiLayerNetwork";
    /** {@code modelType} of a ComputationGraph. */
    public static final String TYPE_COMPUTATION_GRAPH = "ComputationGraph";
    /** Magic number at the start of {@code coefficients.bin} and {@code updaterState.bin} ("FDLV"). */
    static final int VECTOR_MAGIC = 0x46444C56;

    private static final String STREAM = "<stream>";

    private ModelSerializer() {
    }

    /** What a model to save consists of, whatever its network type. */
    static final class ModelParts {
        final String modelType;
        final String configurationJson;
        final float[] params;
        /** Null when not saved. */
        final float[] updaterState;

        ModelParts(String modelType, String configurationJson, float[] params, float[] updaterState) {
            this.modelType = modelType;
            this.configurationJson = configurationJson;
            this.params = params;
            this.updaterState = updaterState;
        }
    }

    // ---- writing ------------------------------------------------------------------------------

    /**
     * Writes a model to a file, through a temporary file in the same directory that is then renamed
     * (a crash never leaves a half-written model under the final name).
     *
     * @param model an initialized network
     * @param file destination
     * @param saveUpdater whether to include the updater state (needed to continue training exactly)
     * @throws IOException on a write error
     * @throws IllegalArgumentException for a model type this build cannot save
     */
    public static void writeModel(Model model, File file, boolean saveUpdater) throws IOException {
        ModelParts parts = partsOf(model, saveUpdater);
        File dir = file.getAbsoluteFile().getParentFile();
        File tmp = File.createTempFile(".ferrodl-model-", ".tmp", dir);
        try {
            try (OutputStream out = Files.newOutputStream(tmp.toPath())) {
                write(parts, out);
            }
            Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp.toPath());
        }
    }

    /**
     * @param model an initialized network
     * @param path destination file path
     * @param saveUpdater whether to include the updater state
     * @throws IOException on a write error
     */
    public static void writeModel(Model model, String path, boolean saveUpdater) throws IOException {
        writeModel(model, new File(path), saveUpdater);
    }

    /**
     * Writes a model to a stream; the archive is finished and the stream flushed, not closed.
     *
     * @param model an initialized network
     * @param stream destination
     * @param saveUpdater whether to include the updater state
     * @throws IOException on a write error
     */
    public static void writeModel(Model model, OutputStream stream, boolean saveUpdater) throws IOException {
        write(partsOf(model, saveUpdater), stream);
    }

    private static ModelParts partsOf(Model model, boolean saveUpdater) {
        Objects.requireNonNull(model, "model");
        if (model instanceof MultiLayerNetwork) {
            MultiLayerNetwork net = (MultiLayerNetwork) model;
            String json = net.getLayerWiseConfigurations().toJson();
            float[] params = NDArray.internalData(net.params());
            float[] upd = saveUpdater ? NDArray.internalData(net.getUpdaterState()) : null;
            return new ModelParts(TYPE_MULTI_LAYER_NETWORK, json, params, upd);
        }
        if (model instanceof ComputationGraph) {
            ComputationGraph net = (ComputationGraph) model;
            String json = net.getConfiguration().toJson();
            float[] params = NDArray.internalData(net.params());
            float[] upd = saveUpdater ? NDArray.internalData(net.getUpdaterState()) : null;
            return new ModelParts(TYPE_COMPUTATION_GRAPH, json, params, upd);
        }
        throw new IllegalArgumentException("cannot save a " + model.getClass().getName()
                + ": ModelSerializer saves MultiLayerNetwork and ComputationGraph models");
    }

    private static void write(ModelParts parts, OutputStream stream) throws IOException {
        ZipOutputStream zip = new ZipOutputStream(stream);
        Properties p = new Properties();
        p.setProperty("formatVersion", Integer.toString(MODEL_FORMAT_VERSION));
        p.setProperty("ferrodlVersion", NativeLoader.javaVersion());
        p.setProperty("modelType", parts.modelType);
        p.setProperty("numParams", Integer.toString(parts.params.length));
        p.setProperty("hasUpdaterState", Boolean.toString(parts.updaterState != null));
        ByteArrayOutputStream props = new ByteArrayOutputStream();
        p.store(props, "ferrodl model");
        putEntry(zip, MODEL_PROPERTIES, props.toByteArray());
        putEntry(zip, CONFIGURATION_JSON, parts.configurationJson.getBytes(StandardCharsets.UTF_8));
        zip.putNextEntry(new ZipEntry(COEFFICIENTS_BIN));
        writeVector(zip, parts.params);
        zip.closeEntry();
        if (parts.updaterState != null) {
            zip.putNextEntry(new ZipEntry(UPDATER_BIN));
            writeVector(zip, parts.updaterState);
            zip.closeEntry();
        }
        zip.finish();
        stream.flush();
    }

    private static void putEntry(ZipOutputStream zip, String name, byte[] bytes) throws IOException {
        zip.putNextEntry(new ZipEntry(name));
        zip.write(bytes);
        zip.closeEntry();
    }

    private static void writeVector(OutputStream out, float[] v) throws IOException {
        DataOutputStream d = new DataOutputStream(new BufferedOutputStream(out));
        d.writeInt(VECTOR_MAGIC);
        d.writeLong(v.length);
        for (float x : v) {
            d.writeFloat(x);
        }
        d.flush();
    }

    // ---- reading ------------------------------------------------------------------------------

    /**
     * @param file a model written by {@link #writeModel}
     * @return the initialized network, with its updater state when the file has one
     * @throws IOException when the file is missing or not a valid MultiLayerNetwork model (the
     *     message names the file and the problem)
     */
    public static MultiLayerNetwork restoreMultiLayerNetwork(File file) throws IOException {
        return restoreMultiLayerNetwork(file, true);
    }

    /**
     * @param file a model written by {@link #writeModel}
     * @param loadUpdater whether to restore the updater state (when the file has one)
     * @return the initialized network
     * @throws IOException when the file is missing or not a valid MultiLayerNetwork model
     */
    public static MultiLayerNetwork restoreMultiLayerNetwork(File file, boolean loadUpdater) throws IOException {
        try (Archive a = Archive.open(file, file.toString(), TYPE_MULTI_LAYER_NETWORK)) {
            return toMultiLayerNetwork(a, loadUpdater);
        }
    }

    /**
     * @param path path of a model file
     * @return the initialized network
     * @throws IOException when the file is missing or invalid
     */
    public static MultiLayerNetwork restoreMultiLayerNetwork(String path) throws IOException {
        return restoreMultiLayerNetwork(new File(path), true);
    }

    /**
     * @param path path of a model file
     * @param loadUpdater whether to restore the updater state
     * @return the initialized network
     * @throws IOException when the file is missing or invalid
     */
    public static MultiLayerNetwork restoreMultiLayerNetwork(String path, boolean loadUpdater) throws IOException {
        return restoreMultiLayerNetwork(new File(path), loadUpdater);
    }

    /**
     * @param stream a model as {@link #writeModel(Model, OutputStream, boolean)} wrote it (read to its
     *     end, not closed)
     * @return the initialized network
     * @throws IOException when the bytes are not a valid MultiLayerNetwork model
     */
    public static MultiLayerNetwork restoreMultiLayerNetwork(InputStream stream) throws IOException {
        return restoreMultiLayerNetwork(stream, true);
    }

    /**
     * @param stream a model (read to its end, not closed)
     * @param loadUpdater whether to restore the updater state
     * @return the initialized network
     * @throws IOException when the bytes are not a valid MultiLayerNetwork model
     */
    public static MultiLayerNetwork restoreMultiLayerNetwork(InputStream stream, boolean loadUpdater)
            throws IOException {
        return fromStream(stream, TYPE_MULTI_LAYER_NETWORK, a -> toMultiLayerNetwork(a, loadUpdater));
    }

    private static MultiLayerNetwork toMultiLayerNetwork(Archive a, boolean loadUpdater) throws IOException {
        MultiLayerConfiguration conf;
        try {
            conf = MultiLayerConfiguration.fromJson(a.configurationJson);
        } catch (DL4JInvalidConfigException e) {
            throw new IOException(a.label + ": invalid " + CONFIGURATION_JSON + ": " + e.getMessage(), e);
        }
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        try {
            init(a, net::init);
            restoreState(a, loadUpdater, net, net::getUpdaterState, net::setUpdaterState);
            net.setIterationCount(conf.getIterationCount());
            net.setEpochCount(conf.getEpochCount());
            return net;
        } catch (IOException | RuntimeException e) {
            net.close();
            throw e;
        }
    }

    /**
     * Builds the network the configuration describes before any vector is read, so the engine's
     * native memory check (a configuration claiming a huge network) comes first; its refusal names
     * the file.
     */
    private static void init(Archive a, Runnable init) {
        try {
            init.run();
        } catch (NativeMemoryException e) {
            throw new NativeMemoryException(a.label + ": " + CONFIGURATION_JSON + " describes a network that "
                    + "does not fit the native memory budget: " + e.getMessage());
        }
    }

    /**
     * Parameters and, when wanted and saved, the updater state of a freshly initialized model, each
     * read only after its declared length matched what the model needs.
     */
    private static void restoreState(Archive a, boolean loadUpdater, Model net,
            java.util.function.Supplier<INDArray> updaterState,
            java.util.function.Consumer<NDArray> setUpdaterState) throws IOException {
        float[] params = a.vector(COEFFICIENTS_BIN, net.numParams());
        net.setParams(new NDArray(params, 1, params.length));
        if (loadUpdater && a.has(UPDATER_BIN)) {
            float[] upd = a.vector(UPDATER_BIN, updaterState.get().length());
            setUpdaterState.accept(new NDArray(upd, 1, upd.length));
        }
    }

    /**
     * @param file a graph written by {@link #writeModel}
     * @return the initialized graph, with its updater state when the file has one
     * @throws IOException when the file is missing or not a valid ComputationGraph model (a
     *     MultiLayerNetwork file says so and names {@code restoreMultiLayerNetwork})
     */
    public static ComputationGraph restoreComputationGraph(File file) throws IOException {
        return restoreComputationGraph(file, true);
    }

    /**
     * @param file a graph written by {@link #writeModel}
     * @param loadUpdater whether to restore the updater state (when the file has one)
     * @return the initialized graph
     * @throws IOException when the file is missing or not a valid ComputationGraph model
     */
    public static ComputationGraph restoreComputationGraph(File file, boolean loadUpdater) throws IOException {
        try (Archive a = Archive.open(file, file.toString(), TYPE_COMPUTATION_GRAPH)) {
            return toComputationGraph(a, loadUpdater);
        }
    }

    /**
     * @param path path of a graph file
     * @return the initialized graph
     * @throws IOException when the file is missing or invalid
     */
    public static ComputationGraph restoreComputationGraph(String path) throws IOException {
        return restoreComputationGraph(new File(path), true);
    }

    /**
     * @param path path of a graph file
     * @param loadUpdater whether to restore the updater state
     * @return the initialized graph
     * @throws IOException when the file is missing or invalid
     */
    public static ComputationGraph restoreComputationGraph(String path, boolean loadUpdater) throws IOException {
        return restoreComputationGraph(new File(path), loadUpdater);
    }

    /**
     * @param stream a graph as {@link #writeModel(Model, OutputStream, boolean)} wrote it (read to
     *     its end, not closed)
     * @return the initialized graph
     * @throws IOException when the bytes are not a valid ComputationGraph model
     */
    public static ComputationGraph restoreComputationGraph(InputStream stream) throws IOException {
        return restoreComputationGraph(stream, true);
    }

    /**
     * @param stream a graph (read to its end, not closed)
     * @param loadUpdater whether to restore the updater state
     * @return the initialized graph
     * @throws IOException when the bytes are not a valid ComputationGraph model
     */
    public static ComputationGraph restoreComputationGraph(InputStream stream, boolean loadUpdater)
            throws IOException {
        return fromStream(stream, TYPE_COMPUTATION_GRAPH, a -> toComputationGraph(a, loadUpdater));
    }

    private static ComputationGraph toComputationGraph(Archive a, boolean loadUpdater) throws IOException {
        ComputationGraphConfiguration conf;
        try {
            conf = ComputationGraphConfiguration.fromJson(a.configurationJson);
        } catch (DL4JInvalidConfigException e) {
            throw new IOException(a.label + ": invalid " + CONFIGURATION_JSON + ": " + e.getMessage(), e);
        }
        ComputationGraph net = new ComputationGraph(conf);
        try {
            init(a, net::init); // counters come from the configuration
            restoreState(a, loadUpdater, net, net::getUpdaterState, net::setUpdaterState);
            return net;
        } catch (IOException | RuntimeException e) {
            net.close();
            throw e;
        }
    }

    /** Restores from a stream: copied to a temporary file so that the archive has random access. */
    private static <M> M fromStream(InputStream stream, String expectedType, ArchiveReader<M> restore)
            throws IOException {
        Objects.requireNonNull(stream, "stream");
        File tmp = File.createTempFile("ferrodl-model-", ".zip");
        try {
            Files.copy(stream, tmp.toPath(), StandardCopyOption.REPLACE_EXISTING);
            try (Archive a = Archive.open(tmp, STREAM, expectedType)) {
                return restore.apply(a);
            }
        } finally {
            Files.deleteIfExists(tmp.toPath());
        }
    }

    @FunctionalInterface
    private interface ArchiveReader<M> {
        M apply(Archive a) throws IOException;
    }

    /**
     * An opened model archive whose properties, type and configuration were checked and read; the
     * vectors are read on demand, each only after its declared length matched the length the built
     * model needs, so no size a file merely claims is ever allocated.
     */
    static final class Archive implements Closeable {
        final ZipFile zip;
        /** How messages name the archive. */
        final String label;
        final String configurationJson;

        private Archive(ZipFile zip, String label, String configurationJson) {
            this.zip = zip;
            this.label = label;
            this.configurationJson = configurationJson;
        }

        /**
         * @param f the archive
         * @param label how messages name it
         * @param expectedType the {@code modelType} the caller restores
         */
        static Archive open(File f, String label, String expectedType) throws IOException {
            ZipFile zip;
            try {
                zip = new ZipFile(f);
            } catch (ZipException e) {
                throw new IOException(label + " is not a ferrodl model file (not a ZIP archive: " + e.getMessage()
                        + ")", e);
            }
            try {
                return new Archive(zip, label, readConfiguration(zip, label, expectedType));
            } catch (IOException | RuntimeException e) {
                zip.close();
                throw e;
            }
        }

        private static String readConfiguration(ZipFile z, String label, String expectedType) throws IOException {
            ZipEntry propsEntry = z.getEntry(MODEL_PROPERTIES);
            if (propsEntry == null) {
                throw new IOException(label + " is not a ferrodl model file (missing entry " + MODEL_PROPERTIES + ")");
            }
            Properties p = new Properties();
            try (InputStream in = z.getInputStream(propsEntry)) {
                p.load(in);
            }
            String fv = p.getProperty("formatVersion");
            if (!Integer.toString(MODEL_FORMAT_VERSION).equals(fv)) {
                throw new IOException(label + ": unsupported model format version " + fv + " (this ferrodl reads "
                        + MODEL_FORMAT_VERSION + ")");
            }
            String type = p.getProperty("modelType", TYPE_MULTI_LAYER_NETWORK);
            if (!type.equals(expectedType)) {
                throw new IOException(label + " holds a " + type + ", not a " + expectedType + " (restore it with "
                        + "ModelSerializer.restore" + type + ")");
            }
            ZipEntry confEntry = z.getEntry(CONFIGURATION_JSON);
            if (confEntry == null || z.getEntry(COEFFICIENTS_BIN) == null) {
                throw new IOException(label + " is not a complete ferrodl model (missing entry "
                        + (confEntry == null ? CONFIGURATION_JSON : COEFFICIENTS_BIN) + ")");
            }
            try (InputStream in = z.getInputStream(confEntry)) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        }

        boolean has(String entry) {
            return zip.getEntry(entry) != null;
        }

        /**
         * Reads a vector entry that must hold exactly {@code expected} values: the declared count is
         * compared with it (and with the entry's size in the archive) before the array is allocated.
         */
        float[] vector(String entry, long expected) throws IOException {
            ZipEntry e = zip.getEntry(entry);
            if (e == null) {
                throw new IOException(label + " is not a complete ferrodl model (missing entry " + entry + ")");
            }
            try (InputStream in = zip.getInputStream(e)) {
                return readVector(in, e.getSize(), expected, label, entry);
            }
        }

        @Override
        public void close() throws IOException {
            zip.close();
        }
    }

    /**
     * Reads a vector entry; {@code size} is the entry's size from the archive (-1 when unknown),
     * {@code expected} the number of values the model needs.
     */
    private static float[] readVector(InputStream in, long size, long expected, String label, String entry)
            throws IOException {
        DataInputStream d = new DataInputStream(new BufferedInputStream(in));
        try {
            int magic = d.readInt();
            if (magic != VECTOR_MAGIC) {
                throw new IOException(label + ": entry " + entry + " is not a ferrodl vector (bad magic)");
            }
            long n = d.readLong();
            // Checked before allocating: a corrupted or forged count must not drive an allocation.
            if (n != expected) {
                throw new IOException(label + ": entry " + entry + " declares " + n + " values but the configuration "
                        + "needs " + expected);
            }
            if (n > NDArray.MAX_LENGTH) {
                throw new IOException(label + ": entry " + entry + " holds " + n + " values, more than a Java array "
                        + "holds (" + NDArray.MAX_LENGTH + ")");
            }
            if (size >= 0 && size != 12 + 4 * n) {
                throw new IOException(label + ": entry " + entry + " declares " + n + " values (" + (12 + 4 * n)
                        + " bytes) but holds " + size + " bytes");
            }
            float[] v = new float[(int) n];
            for (int i = 0; i < v.length; i++) {
                v[i] = d.readFloat();
            }
            if (d.read() != -1) {
                throw new IOException(label + ": entry " + entry + " has trailing bytes after " + n + " values");
            }
            return v;
        } catch (EOFException e) {
            throw new IOException(label + ": entry " + entry + " is truncated", e);
        }
    }
}
