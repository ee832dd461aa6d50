package org.ferrodl.earlystopping.termination;

/** Stops after {@code maxEpochs} epochs. */
public class MaxEpochsTerminationCondition implements EpochTerminationCondition {
    private static final long serialVersionUID = 1L;
    private final int maxEpochs;

    public MaxEpochsTerminationCondition(int maxEpochs) {
        if (maxEpochs <= 0) {
            throw new IllegalArgumentException("maxEpochs must be positive, got " + maxEpochs);
        }
        this.maxEpochs = maxEpochs;
    }

    @Override
    public void initialize() {
    }

    @Override
    public boolean terminate(int epochNum, double score, boolean minimize) {
        return epochNum + 1 >= maxEpochs;
    }

    @Override
    public String toString() {
        return "MaxEpochsTerminationCondition(" + maxEpochs + ")";
    }
}
