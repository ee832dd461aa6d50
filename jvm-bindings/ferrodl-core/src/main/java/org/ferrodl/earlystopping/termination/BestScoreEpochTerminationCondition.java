package org.ferrodl.earlystopping.termination;

/** Stops as soon as an epoch's score reaches {@code bestExpectedScore} (at most it when minimizing, at least it otherwise). */
public class BestScoreEpochTerminationCondition implements EpochTerminationCondition {
    private static final long serialVersionUID = 1L;
    private final double bestExpectedScore;

    public BestScoreEpochTerminationCondition(double bestExpectedScore) {
        this.bestExpectedScore = bestExpectedScore;
    }

    @Override
    public void initialize() {
    }

    @Override
    public boolean terminate(int epochNum, double score, boolean minimize) {
        if (Double.isNaN(score)) {
            return false;
        }
        return minimize ? score <= bestExpectedScore : score >= bestExpectedScore;
    }

    @Override
    public String toString() {
        return "BestScoreEpochTerminationCondition(" + bestExpectedScore + ")";
    }
}
