package org.ferrodl.earlystopping.termination;

/**
 * Stops when the score has not improved by more than {@code minImprovement} over the best score so
 * far for {@code maxEpochsWithNoImprovement} consecutive epochs. Epochs without a score (NaN) do
 * not count either way.
 */
public class ScoreImprovementEpochTerminationCondition implements EpochTerminationCondition {
    private static final long serialVersionUID = 1L;
    private final int maxEpochsWithNoImprovement;
    private final double minImprovement;
    private double bestScore;
    private int epochsWithoutImprovement;
    private boolean seenScore;

    public ScoreImprovementEpochTerminationCondition(int maxEpochsWithNoImprovement) {
        this(maxEpochsWithNoImprovement, 0.0);
    }

    public ScoreImprovementEpochTerminationCondition(int maxEpochsWithNoImprovement, double minImprovement) {
        if (maxEpochsWithNoImprovement <= 0 || minImprovement < 0) {
            throw new IllegalArgumentException("need maxEpochsWithNoImprovement > 0 and minImprovement >= 0, got "
                    + maxEpochsWithNoImprovement + " and " + minImprovement);
        }
        this.maxEpochsWithNoImprovement = maxEpochsWithNoImprovement;
        this.minImprovement = minImprovement;
    }

    @Override
    public void initialize() {
        seenScore = false;
        epochsWithoutImprovement = 0;
    }

    @Override
    public boolean terminate(int epochNum, double score, boolean minimize) {
        if (Double.isNaN(score)) {
            return false;
        }
        if (!seenScore) {
            seenScore = true;
            bestScore = score;
            return false;
        }
        double improvement = minimize ? bestScore - score : score - bestScore;
        if (improvement > minImprovement) {
            bestScore = score;
            epochsWithoutImprovement = 0;
            return false;
        }
        epochsWithoutImprovement++;
        return epochsWithoutImprovement >= maxEpochsWithNoImprovement;
    }

    @Override
    public String toString() {
        return "ScoreImprovementEpochTerminationCondition(maxEpochsWithNoImprovement=" + maxEpochsWithNoImprovement
                + ", minImprovement=" + minImprovement + ")";
    }
}
