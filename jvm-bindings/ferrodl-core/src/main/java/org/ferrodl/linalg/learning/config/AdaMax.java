package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * The AdaMax updater, the infinity-norm variant of Adam (Kingma and Ba, 2014). With
 * {@code t = iteration + 1}: {@code m = β1·m + (1-β1)·g}, {@code u = max(β2·u, |g|)},
 * {@code update = lr/(1-β1^t) · m/(u+ε)}. State per parameter block: {@code m} then {@code u}.
 *
 * <p>JSON: {@code {"type":"AdaMax","learningRate":0.001,"beta1":0.9,"beta2":0.999,"epsilon":1e-8}},
 * plus {@code "learningRateSchedule":{...}} when a schedule is set.
 */
public class AdaMax extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_ADAMAX_LEARNING_RATE = 1e-3;
    /** Default β1, 0.9. */
    public static final double DEFAULT_ADAMAX_BETA1_MEAN_DECAY = 0.9;
    /** Default β2, 0.999. */
    public static final double DEFAULT_ADAMAX_BETA2_VAR_DECAY = 0.999;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_ADAMAX_EPSILON = 1e-8;

    private double beta1;
    private double beta2;
    private double epsilon;

    /** AdaMax with the default hyper-parameters (1e-3, 0.9, 0.999, 1e-8). */
    public AdaMax() {
        this(DEFAULT_ADAMAX_LEARNING_RATE);
    }

    /** @param learningRate the learning rate; the other hyper-parameters take their defaults */
    public AdaMax(double learningRate) {
        this(learningRate, DEFAULT_ADAMAX_BETA1_MEAN_DECAY, DEFAULT_ADAMAX_BETA2_VAR_DECAY, DEFAULT_ADAMAX_EPSILON);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule; the other hyper-parameters take their
     *     defaults (the fixed learning rate keeps its default and is not used)
     */
    public AdaMax(ISchedule learningRateSchedule) {
        this(DEFAULT_ADAMAX_LEARNING_RATE, learningRateSchedule, DEFAULT_ADAMAX_BETA1_MEAN_DECAY, DEFAULT_ADAMAX_BETA2_VAR_DECAY,
                DEFAULT_ADAMAX_EPSILON);
    }

    /**
     * @param learningRate the learning rate
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public AdaMax(double learningRate, double beta1, double beta2, double epsilon) {
        this(learningRate, null, beta1, beta2, epsilon);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public AdaMax(ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
        this(DEFAULT_ADAMAX_LEARNING_RATE, learningRateSchedule, beta1, beta2, epsilon);
    }

    private AdaMax(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2,
            double epsilon) {
        super(learningRate, learningRateSchedule);
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.epsilon = epsilon;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return β1 */
    public double getBeta1() {
        return beta1;
    }

    /** @param beta1 new β1 */
    public void setBeta1(double beta1) {
        this.beta1 = beta1;
    }

    /** @return β2 */
    public double getBeta2() {
        return beta2;
    }

    /** @param beta2 new β2 */
    public void setBeta2(double beta2) {
        this.beta2 = beta2;
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
        return 2;
    }

    @Override
    public AdaMax clone() {
        return new AdaMax(getLearningRate(), scheduleCopy(), beta1, beta2, epsilon);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(learningRateProblem(), UpdaterChecks.inUnitInterval("beta1", beta1),
                UpdaterChecks.inUnitInterval("beta2", beta2), UpdaterChecks.positive("epsilon", epsilon));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AdaMax)) {
            return false;
        }
        AdaMax a = (AdaMax) o;
        return sameLearningRate(a) && Double.compare(a.beta1, beta1) == 0 && Double.compare(a.beta2, beta2) == 0
                && Double.compare(a.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("AdaMax", getLearningRate(), getLearningRateSchedule(), beta1, beta2, epsilon);
    }

    @Override
    public String toString() {
        return "AdaMax(" + learningRateString() + ", beta1=" + beta1 + ", beta2=" + beta2 + ", epsilon=" + epsilon
                + ")";
    }

    /** Builds a {@link AdaMax}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double learningRate = DEFAULT_ADAMAX_LEARNING_RATE;
        private ISchedule learningRateSchedule;
        private double beta1 = DEFAULT_ADAMAX_BETA1_MEAN_DECAY;
        private double beta2 = DEFAULT_ADAMAX_BETA2_VAR_DECAY;
        private double epsilon = DEFAULT_ADAMAX_EPSILON;

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
         * @param beta1 decay of the first moment, in [0, 1)
         * @return this builder
         */
        public Builder beta1(double beta1) {
            this.beta1 = beta1;
            return this;
        }

        /**
         * @param beta2 decay of the second moment, in [0, 1)
         * @return this builder
         */
        public Builder beta2(double beta2) {
            this.beta2 = beta2;
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
        public AdaMax build() {
            return UpdaterChecks.checked(new AdaMax(learningRate, learningRateSchedule, beta1, beta2, epsilon));
        }
    }
}
