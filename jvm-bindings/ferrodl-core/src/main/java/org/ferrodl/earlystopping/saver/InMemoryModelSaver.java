package org.ferrodl.earlystopping.saver;

import org.ferrodl.earlystopping.EarlyStoppingModelSaver;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/** Keeps copies (clones: configuration, parameters, updater state) of the best and latest networks in memory. */
public class InMemoryModelSaver implements EarlyStoppingModelSaver<MultiLayerNetwork> {
    private static final long serialVersionUID = 1L;

    private transient MultiLayerNetwork best;
    private transient MultiLayerNetwork latest;

    @Override
    public void saveBestModel(MultiLayerNetwork net, double score) {
        MultiLayerNetwork old = best;
        best = net.clone();
        if (old != null && old != latest) {
            old.close();
        }
    }

    @Override
    public void saveLatestModel(MultiLayerNetwork net, double score) {
        MultiLayerNetwork old = latest;
        latest = net.clone();
        if (old != null && old != best) {
            old.close();
        }
    }

    @Override
    public MultiLayerNetwork getBestModel() {
        return best;
    }

    @Override
    public MultiLayerNetwork getLatestModel() {
        return latest;
    }

    @Override
    public String toString() {
        return "InMemoryModelSaver";
    }
}
