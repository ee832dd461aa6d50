package org.ferrodl.linalg.learning.config;

import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * AdaDelta (Zeiler, 2012), which needs no learning rate: {@code a = ρ·a + (1-ρ)·g²},
 * {@code update = g·sqrt(b+ε)/sqrt(a+ε)}, {@code b = ρ·b + (1-ρ)·update²}. State per parameter
 * block: {@code a} (mean square gradient) then {@code b} (mean square update).
 *
 * <p>JSON: {@code {"type":"AdaDelta","rho":0.95,"epsilon":1e-6}}.
 */
public class AdaDelta implements IUpdater {
    private static final long serialVersionUID = 1L;

    /** Default ρ, 0.95. */
    public static final double DEFAULT_ADADELTA_RHO = 0.95;
    /** Default ε, 1e-6. */
    public static final double DEFAULT_ADADELTA_EPSILON = 1e-6;

    private double rho;
    private double epsilon;

    /** AdaDelta with ρ 0.95 and ε 1e-6. */
    public AdaDelta() {
        this(DEFAULT_ADADELTA_RHO, DEFAULT_ADADELTA_EPSILON);
    }

    /**
     * @param rho decay of the running averages, in [0, 1)
     * @param epsilon numerical stability term, > 0
     */
    public AdaDelta(double rho, double epsilon) {
        this.rho = rho;
        this.epsilon = epsilon;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return ρ */
    public double getRho() {
        return rho;
    }

    /** @param rho new ρ */
    public void setRho(double rho) {
        this.rho = rho;
    }

    /** @return ε */
    public double getEpsilon() {
        return epsilon;
    }

    /** @param epsilon new ε */
    public void setEpsilon(double epsilon) {
        this.epsilon = epsilon;
    }

    /** @return NaN: AdaDelta has no learning rate */
    @Override
    public double getLearningRate() {
        return Double.NaN;
    }

    /** @throws UnsupportedOperationException always: AdaDelta has no learning rate */
    @Override
    public void setLearningRate(double learningRate) {
        throw new UnsupportedOperationException("AdaDelta has no learning rate");
    }

    @Override
    public boolean hasLearningRate() {
        return false;
    }

    /** @throws UnsupportedOperationException always: AdaDelta has no learning rate */
    @Override
    public void setLrAndSchedule(double lr, ISchedule lrSchedule) {
        throw new UnsupportedOperationException("AdaDelta has no learning rate or learning-rate schedule");
    }

    @Override
    public int stateSizePerParam() {
        return 2;
    }

    @Override
    public AdaDelta clone() {
        return new AdaDelta(rho, epsilon);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(UpdaterChecks.inUnitInterval("rho", rho),
                UpdaterChecks.positive("epsilon", epsilon));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AdaDelta)) {
            return false;
        }
        AdaDelta a = (AdaDelta) o;
        return Double.compare(a.rho, rho) == 0 && Double.compare(a.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("AdaDelta", rho, epsilon);
    }

    @Override
    public String toString() {
        return "AdaDelta(rho=" + rho + ", epsilon=" + epsilon + ")";
    }

    /** Builds an {@link AdaDelta}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double rho = DEFAULT_ADADELTA_RHO;
        private double epsilon = DEFAULT_ADADELTA_EPSILON;

        /** Starts from the defaults. */
        public Builder() {
        }

        /**
         * @param rho decay of the running averages, in [0, 1)
         * @return this builder
         */
        public Builder rho(double rho) {
            this.rho = rho;
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
        public AdaDelta build() {
            return UpdaterChecks.checked(new AdaDelta(rho, epsilon));
        }
    }
}
