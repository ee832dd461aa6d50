package org.ferrodl.spark.parameterserver.training;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.ferrodl.jni.NativeSharedWorker;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.api.Model;
import org.ferrodl.optimize.api.TrainingListener;

/**
 * What the listeners and training hooks of a gradient-sharing fit see of one native replica: the {@link Model} passed
 * to {@link TrainingListener#iterationDone} after each of its minibatches, with that minibatch's
 * score and size; {@link #params()} copies the replica's current parameters out of the engine.
 * The replica's parameters change only through encoded updates (its own and the other workers'),
 * so {@link #setParams} is refused: setting them here would silently diverge from every other
 * worker and from the driver's master copy.
 */
final class ReplicaModel implements Model {
    private final long replica;
    private final long numParams;
    private List<TrainingListener> listeners;
    private double score = Double.NaN;
    private int batchSize;

    ReplicaModel(long replica, long numParams, List<TrainingListener> listeners) {
        this.replica = replica;
        this.numParams = numParams;
        this.listeners = List.copyOf(listeners);
    }

    /** Records the score and size of the minibatch just fitted (what hooks and listeners see). */
    void fitted(double minibatchScore, int minibatchSize) {
        score = minibatchScore;
        batchSize = minibatchSize;
    }

    /** Records a minibatch and calls every listener's {@code iterationDone}. */
    void iterationDone(double minibatchScore, int minibatchSize, long iteration, long epoch) {
        fitted(minibatchScore, minibatchSize);
        for (TrainingListener l : listeners) {
            l.iterationDone(this, Math.toIntExact(iteration), Math.toIntExact(epoch));
        }
    }

    boolean hasListeners() {
        return !listeners.isEmpty();
    }

    @Override
    public double score() {
        return score;
    }

    @Override
    public INDArray params() {
        float[] p = NativeSharedWorker.replicaParams(replica);
        return Nd4j.create(p, 1, p.length);
    }

    /**
     * Refused on purpose: listeners see a replica read-only (a replica that took other parameters
     * would silently diverge from the other workers and the driver), so a listener that tries
     * gets this explanation instead of a corrupted fit.
     */
    @Override
    public void setParams(INDArray params) {
        throw new UnsupportedOperationException("a gradient-sharing replica's parameters change only through the "
                + "shared encoded updates; setting them would diverge from the other workers and the driver");
    }

    @Override
    public long numParams() {
        return numParams;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    @Override
    public void setListeners(TrainingListener... listeners) {
        setListeners(listeners == null ? null : Arrays.asList(listeners));
    }

    @Override
    public void setListeners(Collection<TrainingListener> listeners) {
        this.listeners = listeners == null ? List.of() : List.copyOf(listeners);
    }

    @Override
    public void addListeners(TrainingListener... more) {
        List<TrainingListener> all = new ArrayList<>(listeners);
        all.addAll(Arrays.asList(more));
        this.listeners = List.copyOf(all);
    }

    @Override
    public Collection<TrainingListener> getListeners() {
        return Collections.unmodifiableList(listeners);
    }
}
