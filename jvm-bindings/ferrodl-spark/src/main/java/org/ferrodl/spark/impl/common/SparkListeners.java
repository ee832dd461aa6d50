package org.ferrodl.spark.impl.common;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.ferrodl.optimize.api.TrainingListener;

/**
 * The rule for listeners that training workers attach to their networks, shared by the Spark
 * wrappers' and the masters' {@code setListeners}: they run on the executors, so each must be
 * {@link Serializable}; a worker attaches the wrapper's listeners, then the master's that are not
 * already among them.
 */
public final class SparkListeners {
    private SparkListeners() {
    }

    /**
     * @return an unmodifiable copy of {@code listeners} (empty for null)
     * @throws IllegalArgumentException for a listener that is not {@link Serializable}
     */
    public static List<TrainingListener> checked(Collection<TrainingListener> listeners) {
        List<TrainingListener> copy = new ArrayList<>();
        if (listeners != null) {
            for (TrainingListener l : listeners) {
                Objects.requireNonNull(l, "listener");
                if (!(l instanceof Serializable)) {
                    throw new IllegalArgumentException("listener " + l.getClass().getName() + " is not Serializable: "
                            + "listeners run on the executors and are sent there with each fit");
                }
                copy.add(l);
            }
        }
        return Collections.unmodifiableList(copy);
    }

    /** The wrapper's listeners followed by the master's that are not the same objects. */
    public static List<TrainingListener> forWorkers(List<TrainingListener> network, List<TrainingListener> master) {
        if (master == null || master.isEmpty()) {
            return network;
        }
        List<TrainingListener> all = new ArrayList<>(network);
        for (TrainingListener l : master) {
            if (all.stream().noneMatch(x -> x == l)) {
                all.add(l);
            }
        }
        return all;
    }
}
