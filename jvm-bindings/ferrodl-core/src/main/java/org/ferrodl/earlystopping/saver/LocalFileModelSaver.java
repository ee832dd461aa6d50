package org.ferrodl.earlystopping.saver;

import java.io.File;
import java.io.IOException;
import java.util.Objects;
import org.ferrodl.earlystopping.EarlyStoppingModelSaver;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Saves the best and latest networks (with updater state) as {@code bestModel.bin} and
 * {@code latestModel.bin} in a local directory, which is created when missing; reading them back
 * loads new networks from those files.
 */
public class LocalFileModelSaver implements EarlyStoppingModelSaver<MultiLayerNetwork> {
    private static final long serialVersionUID = 1L;
    public static final String BEST_MODEL_BIN = "bestModel.bin";
    public static final String LATEST_MODEL_BIN = "latestModel.bin";

    private final String directory;

    /** @param directory where the models are written */
    public LocalFileModelSaver(String directory) {
        this.directory = Objects.requireNonNull(directory, "directory");
        File d = new File(directory);
        if (d.exists() && !d.isDirectory()) {
            throw new IllegalArgumentException("LocalFileModelSaver: " + directory + " exists and is not a directory");
        }
    }

    public LocalFileModelSaver(File directory) {
        this(directory.getAbsolutePath());
    }

    private File file(String name) throws IOException {
        File d = new File(directory);
        if (!d.isDirectory() && !d.mkdirs()) {
            throw new IOException("LocalFileModelSaver: cannot create directory " + directory);
        }
        return new File(d, name);
    }

    @Override
    public void saveBestModel(MultiLayerNetwork net, double score) throws IOException {
        net.save(file(BEST_MODEL_BIN), true);
    }

    @Override
    public void saveLatestModel(MultiLayerNetwork net, double score) throws IOException {
        net.save(file(LATEST_MODEL_BIN), true);
    }

    @Override
    public MultiLayerNetwork getBestModel() throws IOException {
        return load(BEST_MODEL_BIN);
    }

    @Override
    public MultiLayerNetwork getLatestModel() throws IOException {
        return load(LATEST_MODEL_BIN);
    }

    private MultiLayerNetwork load(String name) throws IOException {
        File f = new File(directory, name);
        return f.isFile() ? MultiLayerNetwork.load(f, true) : null;
    }

    public String getDirectory() {
        return directory;
    }

    @Override
    public String toString() {
        return "LocalFileModelSaver(" + directory + ")";
    }
}
