package org.ferrodl.earlystopping.termination;

import java.io.Serializable;

/** Decides after each epoch (and its score) whether training stops. */
public interface EpochTerminationCondition extends Serializable {

    /** Called once before training starts (resets any state). */
    void initialize();

    /**
     * @param epochNum the epoch just finished (0-based)
     * @param score the score of the network after it (NaN when it was not computed this epoch)
     * @param minimize whether lower scores are better
     * @return true to stop
     */
    boolean terminate(int epochNum, double score, boolean minimize);
}
