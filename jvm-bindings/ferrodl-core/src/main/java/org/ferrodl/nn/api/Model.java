package org.ferrodl.nn.api;

import java.util.Collection;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.optimize.api.TrainingListener;

/**
 * What a trainable model offers to {@link TrainingListener}s and other generic code: its score,
 * parameters, the size of the last minibatch and its listeners. Implemented by
 * {@link org.ferrodl.nn.multilayer.MultiLayerNetwork} and {@link org.ferrodl.nn.graph.ComputationGraph}.
 */
public interface Model {

    /** @return the score of the last minibatch fitted (before its update); NaN before any fit */
    double score();

    /** @return a copy of the flat parameter vector, shape {@code [1, numParams]} */
    INDArray params();

    /** @param params flat parameter vector of length {@link #numParams()} */
    void setParams(INDArray params);

    /** @return the number of parameters */
    long numParams();

    /** @return the number of examples of the last minibatch fitted (0 before any fit) */
    int batchSize();

    /** @param listeners the listeners to use from now on (replacing the current ones) */
    void setListeners(TrainingListener... listeners);

    /** @param listeners the listeners to use from now on (replacing the current ones); null clears */
    void setListeners(Collection<TrainingListener> listeners);

    /** @param listeners listeners to add after the current ones */
    void addListeners(TrainingListener... listeners);

    /** @return the current listeners, in call order (a read-only view) */
    Collection<TrainingListener> getListeners();
}
