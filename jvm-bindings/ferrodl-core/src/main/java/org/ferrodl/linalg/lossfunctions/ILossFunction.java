package org.ferrodl.linalg.lossfunctions;

import java.io.Serializable;

/**
 * A loss function object, as accepted by {@code OutputLayer.Builder.lossFn(..)} and
 * {@code LossLayer.Builder.lossFn(..)}: one of the {@link LossFunctions.LossFunction} computations,
 * optionally with a weight per output (the reference's weighted losses, e.g.
 * {@code new LossMCXENT(weights)}). In the configuration JSON it becomes {@code lossFunction} plus
 * {@code lossWeights}.
 *
 * <p>Implementations are immutable.
 */
public interface ILossFunction extends Serializable {

    /** @return the loss computation */
    LossFunctions.LossFunction getLossFunction();

    /** @return a copy of the per-output weights, or null for unweighted */
    double[] getWeights();

    /** @return the reference's short name of the loss function class (e.g. {@code LossMCXENT}) */
    default String name() {
        return getClass().getSimpleName();
    }
}
