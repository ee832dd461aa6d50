package org.ferrodl.linalg.lossfunctions.impl;

import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Cosine proximity ({@link LossFunction#COSINE_PROXIMITY}). */
public class LossCosineProximity extends BaseLossFunction {
    private static final long serialVersionUID = 1L;

    /** The unweighted loss. */
    public LossCosineProximity() {
        super(LossFunction.COSINE_PROXIMITY, null);
    }
}
