package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Mean squared logarithmic error, optionally weighted per output ({@link LossFunction#MEAN_SQUARED_LOGARITHMIC_ERROR}). */
public class LossMSLE extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossMSLE() {
        super(LossFunction.MEAN_SQUARED_LOGARITHMIC_ERROR, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossMSLE(INDArray weights) {
        super(LossFunction.MEAN_SQUARED_LOGARITHMIC_ERROR, weights);
    }
}
