package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Kullback-Leibler divergence ({@link LossFunction#KL_DIVERGENCE}). */
public class LossKLD extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossKLD() {
        super(LossFunction.KL_DIVERGENCE, null);
    }
}
