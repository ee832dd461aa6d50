package org.ferrodl.earlystopping;

import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.ferrodl.nn.api.Model;

/**
 * The outcome of an early-stopping run: why it ended, the score of every scored epoch, the best
 * epoch and score, the number of epochs trained and the best model (as kept by the saver).
 */
public class EarlyStoppingResult<T extends Model> implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Why training ended. */
    public enum TerminationReason {
        Error, IterationTerminationCondition, EpochTerminationCondition
    }

    private final TerminationReason terminationReason;
    private final String terminationDetails;
    private final Map<Integer, Double> scoreVsEpoch;
    private final int bestModelEpoch;
    private final double bestModelScore;
    private final int totalEpochs;
    private final transient T bestModel;

    public EarlyStoppingResult(TerminationReason terminationReason, String terminationDetails,
                               Map<Integer, Double> scoreVsEpoch, int bestModelEpoch, double bestModelScore,
                               int totalEpochs, T bestModel) {
        this.terminationReason = terminationReason;
        this.terminationDetails = terminationDetails;
        this.scoreVsEpoch = Collections.unmodifiableMap(new LinkedHashMap<>(scoreVsEpoch));
        this.bestModelEpoch = bestModelEpoch;
        this.bestModelScore = bestModelScore;
        this.totalEpochs = totalEpochs;
        this.bestModel = bestModel;
    }

    public TerminationReason getTerminationReason() {
        return terminationReason;
    }

    /** The condition that fired (its toString), or the error. */
    public String getTerminationDetails() {
        return terminationDetails;
    }

    /** Score of each scored epoch (0-based epoch → score), in epoch order. */
    public Map<Integer, Double> getScoreVsEpoch() {
        return scoreVsEpoch;
    }

    /** The epoch of the best model, or -1 when no epoch was scored. */
    public int getBestModelEpoch() {
        return bestModelEpoch;
    }

    public double getBestModelScore() {
        return bestModelScore;
    }

    /** Epochs trained (a run stopped by an iteration condition counts its unfinished epoch). */
    public int getTotalEpochs() {
        return totalEpochs;
    }

    /** The best model, or null when no epoch was scored. */
    public T getBestModel() {
        return bestModel;
    }

    @Override
    public String toString() {
        return "EarlyStoppingResult(terminationReason=" + terminationReason + ", details=" + terminationDetails
                + ", bestModelEpoch=" + bestModelEpoch + ", bestModelScore=" + bestModelScore + ", totalEpochs="
                + totalEpochs + ")";
    }
}
