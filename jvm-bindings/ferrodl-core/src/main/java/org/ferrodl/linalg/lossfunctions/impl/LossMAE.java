package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Mean absolute error, optionally weighted per output ({@link LossFunction#MEAN_ABSOLUTE_ERROR}). */
public class LossMAE extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossMAE() {
        super(LossFunction.MEAN_ABSOLUTE_ERROR, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossMAE(INDArray weights) {
        super(LossFunction.MEAN_ABSOLUTE_ERROR, weights);
    }
}
