package org.ferrodl.earlystopping.saver;

import java.io.File;
import java.io.IOException;
import java.nio.charset.Charset;
import org.ferrodl.nn.graph.ComputationGraph;

/**
 * The early-stopping saver of a {@link ComputationGraph} on local disk, as the reference's: the
 * best and latest graphs (with updater state) are written as {@code bestGraph.bin} and
 * {@code latestGraph.bin} (the {@code ModelSerializer} format) in a directory that is created when
 * missing; {@link #getBestModel()} / {@link #getLatestModel()} load new graphs from those files,
 * or return null when that model was never saved.
 */
public class LocalFileGraphSaver extends LocalFileSaver<ComputationGraph> {
    private static final long serialVersionUID = 1L;
    public static final String BEST_GRAPH_BIN = "bestGraph.bin";
    public static final String LATEST_GRAPH_BIN = "latestGraph.bin";

    /** @param directory where the graphs are written */
    public LocalFileGraphSaver(String directory) {
        this(directory, Charset.defaultCharset());
    }

    /**
     * @param directory where the graphs are written
     * @param encoding  accepted for the reference's signature; the model files are binary
     */
    public LocalFileGraphSaver(String directory, Charset encoding) {
        super(directory, encoding, BEST_GRAPH_BIN, LATEST_GRAPH_BIN);
    }

    public LocalFileGraphSaver(File directory) {
        this(directory.getAbsolutePath());
    }

    @Override
    protected void write(ComputationGraph net, File f) throws IOException {
        net.save(f, true);
    }

    @Override
    protected ComputationGraph read(File f) throws IOException {
        return ComputationGraph.load(f, true);
    }
}
