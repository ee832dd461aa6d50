package org.ferrodl.earlystopping.saver;

import java.io.File;
import java.io.IOException;
import java.nio.charset.Charset;
import java.util.Objects;
import org.ferrodl.earlystopping.EarlyStoppingModelSaver;
import org.ferrodl.nn.api.Model;

/**
 * What {@link LocalFileModelSaver} and {@link LocalFileGraphSaver} share: a local directory
 * (created on the first save when missing) holding the best and the latest model as two files in
 * the network's own format, with updater state; reading one back loads a new network from its
 * file, or gives null when it was never saved. A path that exists and is not a directory is
 * refused at construction, a directory that cannot be created at the first save, both naming it.
 *
 * @param <T> the network type
 */
abstract class LocalFileSaver<T extends Model> implements EarlyStoppingModelSaver<T> {
    private static final long serialVersionUID = 1L;

    private final String directory;
    private final String bestFile;
    private final String latestFile;
    /** Kept for the reference's constructors; the model files are binary, so nothing is encoded with it. */
    private final String encoding;

    LocalFileSaver(String directory, Charset encoding, String bestFile, String latestFile) {
        this.directory = Objects.requireNonNull(directory, "directory");
        this.encoding = Objects.requireNonNull(encoding, "encoding").name();
        this.bestFile = bestFile;
        this.latestFile = latestFile;
        File d = new File(directory);
        if (d.exists() && !d.isDirectory()) {
            throw new IllegalArgumentException(getClass().getSimpleName() + ": " + directory
                    + " exists and is not a directory");
        }
    }

    /** Writes {@code net} (with its updater state) to {@code f}. */
    protected abstract void write(T net, File f) throws IOException;

    /** Loads a network (with its updater state) from {@code f}. */
    protected abstract T read(File f) throws IOException;

    private File file(String name) throws IOException {
        File d = new File(directory);
        if (!d.isDirectory() && !d.mkdirs()) {
            throw new IOException(getClass().getSimpleName() + ": cannot create directory " + directory
                    + (d.exists() ? " (it exists and is not a directory)" : ""));
        }
        return new File(d, name);
    }

    @Override
    public void saveBestModel(T net, double score) throws IOException {
        write(net, file(bestFile));
    }

    @Override
    public void saveLatestModel(T net, double score) throws IOException {
        write(net, file(latestFile));
    }

    @Override
    public T getBestModel() throws IOException {
        return load(bestFile);
    }

    @Override
    public T getLatestModel() throws IOException {
        return load(latestFile);
    }

    private T load(String name) throws IOException {
        File f = new File(directory, name);
        return f.isFile() ? read(f) : null;
    }

    public String getDirectory() {
        return directory;
    }

    /** @return the charset given at construction (the reference's parameter; unused by the binary files) */
    public Charset getEncoding() {
        return Charset.forName(encoding);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + directory + ")";
    }
}
