package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Squared hinge loss ({@link LossFunction#SQUARED_HINGE}). */
public class LossSquaredHinge extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossSquaredHinge() {
        super(LossFunction.SQUARED_HINGE, null);
    }
}
