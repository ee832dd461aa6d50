package org.ferrodl.earlystopping.termination;

/** Stops when a minibatch score exceeds {@code maxScore} (or is NaN): training has diverged. */
public class MaxScoreIterationTerminationCondition implements IterationTerminationCondition {
    private static final long serialVersionUID = 1L;
    private final double maxScore;

    public MaxScoreIterationTerminationCondition(double maxScore) {
        this.maxScore = maxScore;
    }

    @Override
    public void initialize() {
    }

    @Override
    public boolean terminate(double lastMiniBatchScore) {
        return lastMiniBatchScore > maxScore || Double.isNaN(lastMiniBatchScore);
    }

    @Override
    public String toString() {
        return "MaxScoreIterationTerminationCondition(" + maxScore + ")";
    }
}
