package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * The Nadam updater, Adam with Nesterov momentum (Dozat, 2016). With {@code t = iteration + 1}:
 * {@code m = β1·m + (1-β1)·g}, {@code v = β2·v + (1-β2)·g²},
 * {@code update = lr·(β1·m + (1-β1)·g)/(1-β1^t) / (sqrt(v)+ε)}.
 * State per parameter block: {@code m} then {@code v}.
 *
 * <p>JSON: {@code {"type":"Nadam","learningRate":0.001,"beta1":0.9,"beta2":0.999,"epsilon":1e-8}},
 * plus {@code "learningRateSchedule":{...}} when a schedule is set.
 */
public class Nadam extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_NADAM_LEARNING_RATE = 1e-3;
    /** Default β1, 0.9. */
    public static final double DEFAULT_NADAM_BETA1_MEAN_DECAY = 0.9;
    /** Default β2, 0.999. */
    public static final double DEFAULT_NADAM_BETA2_VAR_DECAY = 0.999;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_NADAM_EPSILON = 1e-8;

    private double beta1;
    private double beta2;
    private double epsilon;

    /** Nadam with the default hyper-parameters (1e-3, 0.9, 0.999, 1e-8). */
    public Nadam() {
        this(DEFAULT_NADAM_LEARNING_RATE);
    }

    /** @param learningRate the learning rate; the other hyper-parameters take their defaults */
    public Nadam(double learningRate) {
        this(learningRate, DEFAULT_NADAM_BETA1_MEAN_DECAY, DEFAULT_NADAM_BETA2_VAR_DECAY, DEFAULT_NADAM_EPSILON);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule; the other hyper-parameters take their
     *     defaults (the fixed learning rate keeps its default and is not used)
     */
    public Nadam(ISchedule learningRateSchedule) {
        this(DEFAULT_NADAM_LEARNING_RATE, learningRateSchedule, DEFAULT_NADAM_BETA1_MEAN_DECAY, DEFAULT_NADAM_BETA2_VAR_DECAY,
                DEFAULT_NADAM_EPSILON);
    }

    /**
     * @param learningRate the learning rate
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public Nadam(double learningRate, double beta1, double beta2, double epsilon) {
        this(learningRate, null, beta1, beta2, epsilon);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public Nadam(ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
        this(DEFAULT_NADAM_LEARNING_RATE, learningRateSchedule, beta1, beta2, epsilon);
    }

    private Nadam(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2,
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
    public Nadam clone() {
        return new Nadam(getLearningRate(), scheduleCopy(), beta1, beta2, epsilon);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(learningRateProblem(), UpdaterChecks.inUnitInterval("beta1", beta1),
                UpdaterChecks.inUnitInterval("beta2", beta2), UpdaterChecks.positive("epsilon", epsilon));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Nadam)) {
            return false;
        }
        Nadam a = (Nadam) o;
        return sameLearningRate(a) && Double.compare(a.beta1, beta1) == 0 && Double.compare(a.beta2, beta2) == 0
                && Double.compare(a.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("Nadam", getLearningRate(), getLearningRateSchedule(), beta1, beta2, epsilon);
    }

    @Override
    public String toString() {
        return "Nadam(" + learningRateString() + ", beta1=" + beta1 + ", beta2=" + beta2 + ", epsilon=" + epsilon
                + ")";
    }

    /** Builds a {@link Nadam}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double learningRate = DEFAULT_NADAM_LEARNING_RATE;
        private ISchedule learningRateSchedule;
        private double beta1 = DEFAULT_NADAM_BETA1_MEAN_DECAY;
        private double beta2 = DEFAULT_NADAM_BETA2_VAR_DECAY;
        private double epsilon = DEFAULT_NADAM_EPSILON;

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
        public Nadam build() {
            return UpdaterChecks.checked(new Nadam(learningRate, learningRateSchedule, beta1, beta2, epsilon));
        }
    }
}
