package org.ferrodl.earlystopping.saver;

import org.ferrodl.earlystopping.EarlyStoppingModelSaver;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Keeps copies (clones: configuration, parameters, updater state) of the best and latest networks
 * in memory; for {@link MultiLayerNetwork}s and {@link ComputationGraph}s.
 *
 * @param <T> the network type
 */
public class InMemoryModelSaver<T extends Model> implements EarlyStoppingModelSaver<T> {
    private static final long serialVersionUID = 1L;

    private transient T best;
    private transient T latest;

    @Override
    public void saveBestModel(T net, double score) {
        T old = best;
        best = copy(net);
        if (old != null && old != latest) {
            close(old);
        }
    }

    @Override
    public void saveLatestModel(T net, double score) {
        T old = latest;
        latest = copy(net);
        if (old != null && old != best) {
            close(old);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Model> T copy(T net) {
        if (net instanceof MultiLayerNetwork m) {
            return (T) m.clone();
        }
        if (net instanceof ComputationGraph g) {
            return (T) g.clone();
        }
        throw new IllegalArgumentException("InMemoryModelSaver keeps MultiLayerNetworks and ComputationGraphs, not "
                + net.getClass().getName());
    }

    private static void close(Model net) {
        if (net instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("cannot release the replaced model: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public T getBestModel() {
        return best;
    }

    @Override
    public T getLatestModel() {
        return latest;
    }

    @Override
    public String toString() {
        return "InMemoryModelSaver";
    }
}
