package org.ferrodl.spark.api;

import java.io.Serializable;

/**
 * What the worker tasks of a training master send back to the driver at the end of their share of
 * a fit (parameters or their sums, updater states, reports, statistics). The type a master's
 * {@link TrainingMaster} signature names as {@code R}.
 */
public interface TrainingResult extends Serializable {

    /** @return minibatches the worker task(s) behind this result fitted */
    long getMinibatches();

    /** @return examples the worker task(s) behind this result fitted */
    long getExamples();
}
