package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Negative log likelihood (the same computation as MCXENT), optionally weighted per output ({@link LossFunction#NEGATIVELOGLIKELIHOOD}). */
public class LossNegativeLogLikelihood extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossNegativeLogLikelihood() {
        super(LossFunction.NEGATIVELOGLIKELIHOOD, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossNegativeLogLikelihood(INDArray weights) {
        super(LossFunction.NEGATIVELOGLIKELIHOOD, weights);
    }
}
