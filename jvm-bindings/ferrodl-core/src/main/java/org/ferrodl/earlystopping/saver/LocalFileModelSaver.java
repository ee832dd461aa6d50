package org.ferrodl.earlystopping.saver;

import java.io.File;
import java.io.IOException;
import java.nio.charset.Charset;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Saves the best and latest networks (with updater state) as {@code bestModel.bin} and
 * {@code latestModel.bin} in a local directory, which is created when missing; reading them back
 * loads new networks from those files. {@link LocalFileGraphSaver} does the same for a
 * {@code ComputationGraph}.
 */
public class LocalFileModelSaver extends LocalFileSaver<MultiLayerNetwork> {
    private static final long serialVersionUID = 1L;
    public static final String BEST_MODEL_BIN = "bestModel.bin";
    public static final String LATEST_MODEL_BIN = "latestModel.bin";

    /** @param directory where the models are written */
    public LocalFileModelSaver(String directory) {
        this(directory, Charset.defaultCharset());
    }

    /**
     * @param directory where the models are written
     * @param encoding  accepted for the reference's signature; the model files are binary
     */
    public LocalFileModelSaver(String directory, Charset encoding) {
        super(directory, encoding, BEST_MODEL_BIN, LATEST_MODEL_BIN);
    }

    public LocalFileModelSaver(File directory) {
        this(directory.getAbsolutePath());
    }

    @Override
    protected void write(MultiLayerNetwork net, File f) throws IOException {
        net.save(f, true);
    }

    @Override
    protected MultiLayerNetwork read(File f) throws IOException {
        return MultiLayerNetwork.load(f, true);
    }
}
