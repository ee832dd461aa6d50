package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Sum of squared errors, optionally weighted per output ({@link LossFunction#L2}). */
public class LossL2 extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossL2() {
        super(LossFunction.L2, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossL2(INDArray weights) {
        super(LossFunction.L2, weights);
    }
}
