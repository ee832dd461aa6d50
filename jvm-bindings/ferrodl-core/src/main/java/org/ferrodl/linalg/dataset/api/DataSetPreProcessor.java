package org.ferrodl.linalg.dataset.api;

import java.io.Serializable;
import org.ferrodl.linalg.dataset.DataSet;

/**
 * Modifies each DataSet returned by an iterator, in place (for example normalization).
 */
@FunctionalInterface
public interface DataSetPreProcessor extends Serializable {
    /** @param toPreProcess the DataSet to modify in place */
    void preProcess(DataSet toPreProcess);
}
