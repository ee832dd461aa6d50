package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Sum of absolute errors, optionally weighted per output ({@link LossFunction#L1}). */
public class LossL1 extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossL1() {
        super(LossFunction.L1, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossL1(INDArray weights) {
        super(LossFunction.L1, weights);
    }
}
