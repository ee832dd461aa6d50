package org.ferrodl.linalg.lossfunctions;

import org.ferrodl.linalg.lossfunctions.impl.LossBinaryXENT;
import org.ferrodl.linalg.lossfunctions.impl.LossCosineProximity;
import org.ferrodl.linalg.lossfunctions.impl.LossHinge;
import org.ferrodl.linalg.lossfunctions.impl.LossKLD;
import org.ferrodl.linalg.lossfunctions.impl.LossL1;
import org.ferrodl.linalg.lossfunctions.impl.LossL2;
import org.ferrodl.linalg.lossfunctions.impl.LossMAE;
import org.ferrodl.linalg.lossfunctions.impl.LossMAPE;
import org.ferrodl.linalg.lossfunctions.impl.LossMCXENT;
import org.ferrodl.linalg.lossfunctions.impl.LossMSE;
import org.ferrodl.linalg.lossfunctions.impl.LossMSLE;
import org.ferrodl.linalg.lossfunctions.impl.LossNegativeLogLikelihood;
import org.ferrodl.linalg.lossfunctions.impl.LossPoisson;
import org.ferrodl.linalg.lossfunctions.impl.LossSquaredHinge;

/**
 * Holder of the {@link LossFunction} enum, as in the reference API
 * ({@code LossFunctions.LossFunction.MCXENT}).
 */
public final class LossFunctions {
    private LossFunctions() {
    }

    /** Loss functions of output and loss layers (the JSON value is the constant's name). */
    public enum LossFunction {
        /** Multi-class cross entropy {@code -Σ y·ln(p)}; use with SOFTMAX output. */
        MCXENT,
        /** Negative log likelihood: the same computation as {@link #MCXENT}. */
        NEGATIVELOGLIKELIHOOD,
        /** Mean squared error {@code Σ(y - ŷ)² / nOut}. */
        MSE,
        /** {@code Σ|y - ŷ|}. */
        L1,
        /** {@code Σ(y - ŷ)²}. */
        L2,
        /** Binary cross entropy; use with SIGMOID output. */
        XENT,
        /** {@code Σ|y - ŷ| / nOut}. */
        MEAN_ABSOLUTE_ERROR,
        /** {@code 100 · Σ|(y - ŷ) / y| / nOut}. */
        MEAN_ABSOLUTE_PERCENTAGE_ERROR,
        /** {@code Σ(ln(1 + ŷ) - ln(1 + y))² / nOut}. */
        MEAN_SQUARED_LOGARITHMIC_ERROR,
        /** Hinge loss for labels in {-1, 1}. */
        HINGE,
        /** Squared hinge loss for labels in {-1, 1}. */
        SQUARED_HINGE,
        /** Kullback-Leibler divergence. */
        KL_DIVERGENCE,
        /** Negative cosine similarity. */
        COSINE_PROXIMITY,
        /** Poisson loss. */
        POISSON;

        /** @return the loss object of this loss function, without weights */
        public ILossFunction getILossFunction() {
            switch (this) {
                case MCXENT:
                    return new LossMCXENT();
                case NEGATIVELOGLIKELIHOOD:
                    return new LossNegativeLogLikelihood();
                case MSE:
                    return new LossMSE();
                case L1:
                    return new LossL1();
                case L2:
                    return new LossL2();
                case XENT:
                    return new LossBinaryXENT();
                case MEAN_ABSOLUTE_ERROR:
                    return new LossMAE();
                case MEAN_ABSOLUTE_PERCENTAGE_ERROR:
                    return new LossMAPE();
                case MEAN_SQUARED_LOGARITHMIC_ERROR:
                    return new LossMSLE();
                case HINGE:
                    return new LossHinge();
                case SQUARED_HINGE:
                    return new LossSquaredHinge();
                case KL_DIVERGENCE:
                    return new LossKLD();
                case COSINE_PROXIMITY:
                    return new LossCosineProximity();
                case POISSON:
                    return new LossPoisson();
                default:
                    throw new AssertionError(this);
            }
        }
    }
}
