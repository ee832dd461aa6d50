package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Mean absolute percentage error, optionally weighted per output ({@link LossFunction#MEAN_ABSOLUTE_PERCENTAGE_ERROR}). */
public class LossMAPE extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossMAPE() {
        super(LossFunction.MEAN_ABSOLUTE_PERCENTAGE_ERROR, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossMAPE(INDArray weights) {
        super(LossFunction.MEAN_ABSOLUTE_PERCENTAGE_ERROR, weights);
    }
}
