package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * The updaters that keep decaying moments of the gradient with decays {@code β1}, {@code β2} and a
 * stability term {@code ε}: {@link Adam}, {@link AdaMax}, {@link AMSGrad} and {@link Nadam}. They
 * share their hyper-parameters, validation, equality and builder; each subclass states its formula,
 * its state size and its defaults (the same for all four: 1e-3, 0.9, 0.999, 1e-8).
 */
public abstract class BaseMomentUpdater extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    private double beta1;
    private double beta2;
    private double epsilon;

    BaseMomentUpdater(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2,
            double epsilon) {
        super(learningRate, learningRateSchedule);
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.epsilon = epsilon;
    }

    /** @return β1, the decay of the first moment */
    public double getBeta1() {
        return beta1;
    }

    /** @param beta1 new β1 */
    public void setBeta1(double beta1) {
        this.beta1 = beta1;
    }

    /** @return β2, the decay of the second moment (AdaMax: of the infinity norm) */
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
    public String validate() {
        return UpdaterChecks.firstProblem(learningRateProblem(), UpdaterChecks.inUnitInterval("beta1", beta1),
                UpdaterChecks.inUnitInterval("beta2", beta2), UpdaterChecks.positive("epsilon", epsilon));
    }

    @Override
    public boolean equals(Object o) {
        if (o == null || o.getClass() != getClass()) {
            return false;
        }
        BaseMomentUpdater a = (BaseMomentUpdater) o;
        return sameLearningRate(a) && Double.compare(a.beta1, beta1) == 0 && Double.compare(a.beta2, beta2) == 0
                && Double.compare(a.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass().getSimpleName(), getLearningRate(), getLearningRateSchedule(), beta1, beta2,
                epsilon);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + learningRateString() + ", beta1=" + beta1 + ", beta2=" + beta2
                + ", epsilon=" + epsilon + ")";
    }

    /**
     * The builder shared by the four updaters; unset values take the defaults the subclass passes
     * in. Not thread-safe.
     *
     * @param <U> the updater built
     * @param <B> the concrete builder, returned by every setter
     */
    public abstract static class Builder<U extends BaseMomentUpdater, B extends Builder<U, B>> {
        private double learningRate;
        private ISchedule learningRateSchedule;
        private double beta1;
        private double beta2;
        private double epsilon;

        Builder(double learningRate, double beta1, double beta2, double epsilon) {
            this.learningRate = learningRate;
            this.beta1 = beta1;
            this.beta2 = beta2;
            this.epsilon = epsilon;
        }

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /**
         * @param learningRate the fixed learning rate
         * @return this builder
         */
        public B learningRate(double learningRate) {
            this.learningRate = learningRate;
            return self();
        }

        /**
         * @param learningRateSchedule the schedule (takes precedence over the fixed rate)
         * @return this builder
         */
        public B learningRateSchedule(ISchedule learningRateSchedule) {
            this.learningRateSchedule = learningRateSchedule;
            return self();
        }

        /**
         * @param beta1 decay of the first moment, in [0, 1)
         * @return this builder
         */
        public B beta1(double beta1) {
            this.beta1 = beta1;
            return self();
        }

        /**
         * @param beta2 decay of the second moment, in [0, 1)
         * @return this builder
         */
        public B beta2(double beta2) {
            this.beta2 = beta2;
            return self();
        }

        /**
         * @param epsilon numerical stability term, > 0
         * @return this builder
         */
        public B epsilon(double epsilon) {
            this.epsilon = epsilon;
            return self();
        }

        /** The updater from the builder's values, before validation. */
        abstract U create(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2,
                double epsilon);

        /**
         * @return the updater
         * @throws IllegalArgumentException naming the first invalid field and its value
         */
        public U build() {
            return UpdaterChecks.checked(create(learningRate, learningRateSchedule, beta1, beta2, epsilon));
        }
    }
}
