package org.ferrodl.linalg.dataset.api;

import java.io.Serializable;

/** Modifies each MultiDataSet an iterator returns (normalisation, for example), in place. */
@FunctionalInterface
public interface MultiDataSetPreProcessor extends Serializable {
    /** @param multiDataSet the MultiDataSet to modify in place */
    void preProcess(MultiDataSet multiDataSet);
}
