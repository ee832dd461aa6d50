package org.ferrodl.linalg.lossfunctions;

/**
 * Holder of the {@link LossFunction} enum, as in the reference API
 * ({@code LossFunctions.LossFunction.MCXENT}).
 */
public final class LossFunctions {
    private LossFunctions() {
    }

    /** Loss functions of an output layer. */
    public enum LossFunction {
        /** Multi-class cross entropy {@code -Σ y·ln(p)}; use with SOFTMAX output. */
        MCXENT,
        /** Negative log likelihood: the same computation as {@link #MCXENT}. */
        NEGATIVELOGLIKELIHOOD,
        /** Mean squared error {@code Σ(y - ŷ)² / nOut}. */
        MSE
    }
}
