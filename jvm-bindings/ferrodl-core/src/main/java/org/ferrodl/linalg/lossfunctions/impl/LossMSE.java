package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Mean squared error, optionally weighted per output ({@link LossFunction#MSE}). */
public class LossMSE extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossMSE() {
        super(LossFunction.MSE, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossMSE(INDArray weights) {
        super(LossFunction.MSE, weights);
    }
}
