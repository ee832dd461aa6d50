package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Multi-class cross entropy, optionally weighted per output ({@link LossFunction#MCXENT}). */
public class LossMCXENT extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossMCXENT() {
        super(LossFunction.MCXENT, null);
    }

    /** @param weights one weight per output (a vector), or null for unweighted */
    public LossMCXENT(INDArray weights) {
        super(LossFunction.MCXENT, weights);
    }
}
