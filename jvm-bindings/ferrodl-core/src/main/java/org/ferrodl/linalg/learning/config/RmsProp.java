package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * RMSProp (Tieleman and Hinton, 2012): {@code s = rmsDecay·s + (1-rmsDecay)·g²},
 * {@code update = lr·g/(sqrt(s)+ε)}. State per parameter block: {@code s}, starting at {@code ε}.
 *
 * <p>JSON: {@code {"type":"RmsProp","learningRate":0.1,"rmsDecay":0.95,"epsilon":1e-8}}, plus
 * {@code "learningRateSchedule":{...}} when a schedule is set.
 */
public class RmsProp extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 0.1. */
    public static final double DEFAULT_RMSPROP_LEARNING_RATE = 1e-1;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_RMSPROP_EPSILON = 1e-8;
    /** Default decay of the mean square, 0.95. */
    public static final double DEFAULT_RMSPROP_RMSDECAY = 0.95;

    private double rmsDecay;
    private double epsilon;

    /** RmsProp with the defaults (0.1, 0.95, 1e-8). */
    public RmsProp() {
        this(DEFAULT_RMSPROP_LEARNING_RATE);
    }

    /** @param learningRate the learning rate; rmsDecay and ε take their defaults */
    public RmsProp(double learningRate) {
        this(learningRate, DEFAULT_RMSPROP_RMSDECAY, DEFAULT_RMSPROP_EPSILON);
    }

    /** @param learningRateSchedule the learning-rate schedule; rmsDecay and ε take their defaults */
    public RmsProp(ISchedule learningRateSchedule) {
        this(learningRateSchedule, DEFAULT_RMSPROP_RMSDECAY, DEFAULT_RMSPROP_EPSILON);
    }

    /**
     * @param learningRate the learning rate
     * @param rmsDecay decay of the mean square, in [0, 1)
     * @param epsilon numerical stability term, > 0
     */
    public RmsProp(double learningRate, double rmsDecay, double epsilon) {
        this(learningRate, null, rmsDecay, epsilon);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param rmsDecay decay of the mean square, in [0, 1)
     * @param epsilon numerical stability term, > 0
     */
    public RmsProp(ISchedule learningRateSchedule, double rmsDecay, double epsilon) {
        this(DEFAULT_RMSPROP_LEARNING_RATE, learningRateSchedule, rmsDecay, epsilon);
    }

    private RmsProp(double learningRate, ISchedule learningRateSchedule, double rmsDecay, double epsilon) {
        super(learningRate, learningRateSchedule);
        this.rmsDecay = rmsDecay;
        this.epsilon = epsilon;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the decay of the mean square */
    public double getRmsDecay() {
        return rmsDecay;
    }

    /** @param rmsDecay the new decay of the mean square */
    public void setRmsDecay(double rmsDecay) {
        this.rmsDecay = rmsDecay;
    }

    /** @return ε */
    public double getEpsilon() {
        return epsilon;
    }

    /** @param epsilon new ε */
    public void setEpsilon(double epsilon) {
        this.epsilon = epsilon;
    }

    @Override
    public int stateSizePerParam() {
        return 1;
    }

    @Override
    public RmsProp clone() {
        return new RmsProp(getLearningRate(), scheduleCopy(), rmsDecay, epsilon);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(learningRateProblem(), UpdaterChecks.inUnitInterval("rmsDecay", rmsDecay),
                UpdaterChecks.positive("epsilon", epsilon));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RmsProp)) {
            return false;
        }
        RmsProp r = (RmsProp) o;
        return sameLearningRate(r) && Double.compare(r.rmsDecay, rmsDecay) == 0
                && Double.compare(r.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("RmsProp", getLearningRate(), getLearningRateSchedule(), rmsDecay, epsilon);
    }

    @Override
    public String toString() {
        return "RmsProp(" + learningRateString() + ", rmsDecay=" + rmsDecay + ", epsilon=" + epsilon + ")";
    }

    /** Builds an {@link RmsProp}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double learningRate = DEFAULT_RMSPROP_LEARNING_RATE;
        private ISchedule learningRateSchedule;
        private double rmsDecay = DEFAULT_RMSPROP_RMSDECAY;
        private double epsilon = DEFAULT_RMSPROP_EPSILON;

        /** Starts from the defaults. */
        public Builder() {
        }

        /**
         * @param learningRate the fixed learning rate
         * @return this builder
         */
        public Builder learningRate(double learningRate) {
            this.learningRate = learningRate;
            return this;
        }

        /**
         * @param learningRateSchedule the schedule (takes precedence over the fixed rate)
         * @return this builder
         */
        public Builder learningRateSchedule(ISchedule learningRateSchedule) {
            this.learningRateSchedule = learningRateSchedule;
            return this;
        }

        /**
         * @param rmsDecay decay of the mean square, in [0, 1)
         * @return this builder
         */
        public Builder rmsDecay(double rmsDecay) {
            this.rmsDecay = rmsDecay;
            return this;
        }

        /**
         * @param epsilon numerical stability term, > 0
         * @return this builder
         */
        public Builder epsilon(double epsilon) {
            this.epsilon = epsilon;
            return this;
        }

        /**
         * @return the updater
         * @throws IllegalArgumentException naming the first invalid field and its value
         */
        public RmsProp build() {
            return UpdaterChecks.checked(new RmsProp(learningRate, learningRateSchedule, rmsDecay, epsilon));
        }
    }
}
