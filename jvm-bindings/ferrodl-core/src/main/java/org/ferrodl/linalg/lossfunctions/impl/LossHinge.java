package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Hinge loss ({@link LossFunction#HINGE}). */
public class LossHinge extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossHinge() {
        super(LossFunction.HINGE, null);
    }
}
