package org.ferrodl.earlystopping.termination;

import java.io.Serializable;

/** Decides after each minibatch (local) or each distributed fit (Spark) whether training stops at once. */
public interface IterationTerminationCondition extends Serializable {

    /** Called once before training starts (resets any state, e.g. the start time). */
    void initialize();

    /**
     * @param lastMiniBatchScore the score of the last minibatch
     * @return true to stop
     */
    boolean terminate(double lastMiniBatchScore);
}
