package org.ferrodl.optimize.api;

import java.util.List;
import java.util.Map;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.nn.api.Model;

/**
 * Callbacks from a model's training loop. Register with
 * {@link Model#setListeners(TrainingListener...)} or {@link Model#addListeners(TrainingListener...)};
 * listeners are called in registration order, on the thread that calls {@code fit}.
 *
 * <h2>When each callback runs (MultiLayerNetwork)</h2>
 * <ul>
 *   <li>{@link #iterationDone}: after every minibatch {@code fit}, once the parameters have been
 *       updated. {@code iteration} is the iteration counter the minibatch was trained at (0 for the
 *       network's first minibatch; the counter itself has already moved on to {@code iteration + 1}),
 *       {@code epoch} the epoch counter; {@link Model#score()} is that minibatch's score.</li>
 *   <li>{@link #onEpochStart} / {@link #onEpochEnd}: at the start and end of each pass over a
 *       {@code DataSetIterator} ({@code fit(iterator)}, {@code fit(iterator, numEpochs)}); the epoch
 *       counter is incremented after {@code onEpochEnd}, so both see the same epoch number. Fitting a
 *       single {@code DataSet} has no epoch events.</li>
 *   <li>{@link #onForwardPass}, {@link #onGradientCalculation}, {@link #onBackwardPass}: part of the
 *       interface for compatibility, but ferrodl's networks do not call them: the native engine runs
 *       the forward pass, the backward pass and the update in one call, and the activations and
 *       gradients never reach Java.</li>
 * </ul>
 * An exception thrown by a listener propagates out of {@code fit}; the minibatch has been applied by
 * then.
 *
 * <p>Every method except {@link #iterationDone} has an empty default, so a listener can be a lambda.
 * {@link BaseTrainingListener} also provides an empty {@code iterationDone}.
 */
public interface TrainingListener {

    /**
     * Called after each training iteration (one minibatch).
     *
     * @param model the model being trained
     * @param iteration the iteration counter this minibatch was trained at
     * @param epoch the epoch counter
     */
    void iterationDone(Model model, int iteration, int epoch);

    /** @param model the model, at the start of an epoch */
    default void onEpochStart(Model model) {
    }

    /** @param model the model, at the end of an epoch (before its epoch counter is incremented) */
    default void onEpochEnd(Model model) {
    }

    /**
     * Not called by ferrodl's networks (see the class documentation).
     *
     * @param model the model
     * @param activations the activations of each layer
     */
    default void onForwardPass(Model model, List<INDArray> activations) {
    }

    /**
     * Not called by ferrodl's networks (see the class documentation).
     *
     * @param model the model
     * @param activations the activations by layer name
     */
    default void onForwardPass(Model model, Map<String, INDArray> activations) {
    }

    /**
     * Not called by ferrodl's networks (see the class documentation).
     *
     * @param model the model
     */
    default void onGradientCalculation(Model model) {
    }

    /**
     * Not called by ferrodl's networks (see the class documentation).
     *
     * @param model the model
     */
    default void onBackwardPass(Model model) {
    }
}
