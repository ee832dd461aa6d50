package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * Plain stochastic gradient descent: {@code update = learningRate · gradient}. No state.
 *
 * <p>JSON: {@code {"type":"Sgd","learningRate":0.001}}, plus {@code "learningRateSchedule":{...}}
 * when a schedule is set.
 */
public class Sgd extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_SGD_LR = 1e-3;

    /** SGD with learning rate {@value #DEFAULT_SGD_LR}. */
    public Sgd() {
        this(DEFAULT_SGD_LR);
    }

    /** @param learningRate the learning rate */
    public Sgd(double learningRate) {
        super(learningRate, null);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule (the fixed learning rate keeps its
     *     default and is not used)
     */
    public Sgd(ISchedule learningRateSchedule) {
        super(DEFAULT_SGD_LR, learningRateSchedule);
    }

    private Sgd(double learningRate, ISchedule learningRateSchedule) {
        super(learningRate, learningRateSchedule);
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public int stateSizePerParam() {
        return 0;
    }

    @Override
    public Sgd clone() {
        return new Sgd(getLearningRate(), scheduleCopy());
    }

    @Override
    public String validate() {
        return learningRateProblem();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Sgd && sameLearningRate((Sgd) o);
    }

    @Override
    public int hashCode() {
        return Objects.hash("Sgd", getLearningRate(), getLearningRateSchedule());
    }

    @Override
    public String toString() {
        return "Sgd(" + learningRateString() + ")";
    }

    /** Builds an {@link Sgd}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double learningRate = DEFAULT_SGD_LR;
        private ISchedule learningRateSchedule;

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
         * @return the updater
         * @throws IllegalArgumentException naming the first invalid field and its value
         */
        public Sgd build() {
            return UpdaterChecks.checked(new Sgd(learningRate, learningRateSchedule));
        }
    }
}
