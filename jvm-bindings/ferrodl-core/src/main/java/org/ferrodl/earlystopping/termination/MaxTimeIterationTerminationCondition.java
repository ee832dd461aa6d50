package org.ferrodl.earlystopping.termination;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/** Stops once the given wall-clock time has passed since training started. */
public class MaxTimeIterationTerminationCondition implements IterationTerminationCondition {
    private static final long serialVersionUID = 1L;
    private final long maxTimeAmount;
    private final TimeUnit maxTimeUnit;
    private final long maxTimeNanos;
    private long startNanos;

    public MaxTimeIterationTerminationCondition(long maxTimeAmount, TimeUnit maxTimeUnit) {
        if (maxTimeAmount <= 0) {
            throw new IllegalArgumentException("maxTimeAmount must be positive, got " + maxTimeAmount);
        }
        this.maxTimeAmount = maxTimeAmount;
        this.maxTimeUnit = Objects.requireNonNull(maxTimeUnit, "maxTimeUnit");
        this.maxTimeNanos = maxTimeUnit.toNanos(maxTimeAmount);
    }

    @Override
    public void initialize() {
        startNanos = System.nanoTime();
    }

    @Override
    public boolean terminate(double lastMiniBatchScore) {
        return System.nanoTime() - startNanos >= maxTimeNanos;
    }

    @Override
    public String toString() {
        return "MaxTimeIterationTerminationCondition(" + maxTimeAmount + " " + maxTimeUnit + ")";
    }
}
