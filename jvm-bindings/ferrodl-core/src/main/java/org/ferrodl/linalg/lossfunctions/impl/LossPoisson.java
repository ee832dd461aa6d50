package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Poisson loss ({@link LossFunction#POISSON}). */
public class LossPoisson extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossPoisson() {
        super(LossFunction.POISSON, null);
    }
}
