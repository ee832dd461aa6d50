package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * AdaGrad (Duchi et al., 2011): {@code h = h + g²}, {@code update = lr·g/(sqrt(h)+ε)}. State per
 * parameter block: {@code h}, starting at {@code ε}.
 *
 * <p>JSON: {@code {"type":"AdaGrad","learningRate":0.1,"epsilon":1e-6}}, plus
 * {@code "learningRateSchedule":{...}} when a schedule is set.
 */
public class AdaGrad extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 0.1. */
    public static final double DEFAULT_ADAGRAD_LEARNING_RATE = 1e-1;
    /** Default ε, 1e-6. */
    public static final double DEFAULT_ADAGRAD_EPSILON = 1e-6;

    private double epsilon;

    /** AdaGrad with the defaults (0.1, 1e-6). */
    public AdaGrad() {
        this(DEFAULT_ADAGRAD_LEARNING_RATE);
    }

    /** @param learningRate the learning rate; ε takes its default */
    public AdaGrad(double learningRate) {
        this(learningRate, DEFAULT_ADAGRAD_EPSILON);
    }

    /**
     * @param learningRate the learning rate
     * @param epsilon numerical stability term and initial accumulator value, > 0
     */
    public AdaGrad(double learningRate, double epsilon) {
        this(learningRate, null, epsilon);
    }

    /** @param learningRateSchedule the learning-rate schedule; ε takes its default */
    public AdaGrad(ISchedule learningRateSchedule) {
        this(learningRateSchedule, DEFAULT_ADAGRAD_EPSILON);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param epsilon numerical stability term and initial accumulator value, > 0
     */
    public AdaGrad(ISchedule learningRateSchedule, double epsilon) {
        this(DEFAULT_ADAGRAD_LEARNING_RATE, learningRateSchedule, epsilon);
    }

    private AdaGrad(double learningRate, ISchedule learningRateSchedule, double epsilon) {
        super(learningRate, learningRateSchedule);
        this.epsilon = epsilon;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
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
    public AdaGrad clone() {
        return new AdaGrad(getLearningRate(), scheduleCopy(), epsilon);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(learningRateProblem(), UpdaterChecks.positive("epsilon", epsilon));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AdaGrad)) {
            return false;
        }
        AdaGrad a = (AdaGrad) o;
        return sameLearningRate(a) && Double.compare(a.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("AdaGrad", getLearningRate(), getLearningRateSchedule(), epsilon);
    }

    @Override
    public String toString() {
        return "AdaGrad(" + learningRateString() + ", epsilon=" + epsilon + ")";
    }

    /** Builds an {@link AdaGrad}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double learningRate = DEFAULT_ADAGRAD_LEARNING_RATE;
        private ISchedule learningRateSchedule;
        private double epsilon = DEFAULT_ADAGRAD_EPSILON;

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
        public AdaGrad build() {
            return UpdaterChecks.checked(new AdaGrad(learningRate, learningRateSchedule, epsilon));
        }
    }
}
