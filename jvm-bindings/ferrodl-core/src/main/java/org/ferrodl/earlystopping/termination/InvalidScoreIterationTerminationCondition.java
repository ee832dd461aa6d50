package org.ferrodl.earlystopping.termination;

/** Stops when a minibatch score is NaN or infinite. */
public class InvalidScoreIterationTerminationCondition implements IterationTerminationCondition {
    private static final long serialVersionUID = 1L;

    @Override
    public void initialize() {
    }

    @Override
    public boolean terminate(double lastMiniBatchScore) {
        return !Double.isFinite(lastMiniBatchScore);
    }

    @Override
    public String toString() {
        return "InvalidScoreIterationTerminationCondition";
    }
}
