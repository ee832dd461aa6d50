package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Binary cross entropy, optionally weighted per output ({@link LossFunction#XENT}). */
public class LossBinaryXENT extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossBinaryXENT() {
        super(LossFunction.XENT, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossBinaryXENT(INDArray weights) {
        super(LossFunction.XENT, weights);
    }
}
