package org.ferrodl.linalg.learning.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Objects;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * SGD with Nesterov momentum: {@code vPrev = v; v = μ·v - lr·g; update = μ·vPrev - (1+μ)·v}, with
 * {@code μ} the momentum (or the momentum schedule's value). State per parameter block: {@code v}.
 *
 * <p>JSON: {@code {"type":"Nesterovs","learningRate":0.1,"momentum":0.9}}, plus
 * {@code "learningRateSchedule":{...}} and {@code "momentumSchedule":{...}} when set.
 */
public class Nesterovs extends BaseLearningRateUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 0.1. */
    public static final double DEFAULT_NESTEROV_LEARNING_RATE = 0.1;
    /** Default momentum, 0.9. */
    public static final double DEFAULT_NESTEROV_MOMENTUM = 0.9;

    private double momentum;
    @JsonInclude(JsonInclude.Include.NON_NULL)
    private ISchedule momentumSchedule;

    /** Nesterovs with learning rate 0.1 and momentum 0.9. */
    public Nesterovs() {
        this(DEFAULT_NESTEROV_LEARNING_RATE, DEFAULT_NESTEROV_MOMENTUM);
    }

    /** @param momentum the momentum; learning rate 0.1 */
    public Nesterovs(double momentum) {
        this(DEFAULT_NESTEROV_LEARNING_RATE, momentum);
    }

    /**
     * @param learningRate the learning rate
     * @param momentum the momentum μ
     */
    public Nesterovs(double learningRate, double momentum) {
        this(learningRate, null, momentum, null);
    }

    /** @param learningRateSchedule the learning-rate schedule; momentum 0.9 */
    public Nesterovs(ISchedule learningRateSchedule) {
        this(learningRateSchedule, DEFAULT_NESTEROV_MOMENTUM);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param momentum the momentum μ
     */
    public Nesterovs(ISchedule learningRateSchedule, double momentum) {
        this(DEFAULT_NESTEROV_LEARNING_RATE, learningRateSchedule, momentum, null);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param momentumSchedule the momentum schedule
     */
    public Nesterovs(ISchedule learningRateSchedule, ISchedule momentumSchedule) {
        this(DEFAULT_NESTEROV_LEARNING_RATE, learningRateSchedule, DEFAULT_NESTEROV_MOMENTUM, momentumSchedule);
    }

    /**
     * @param learningRate the learning rate
     * @param momentumSchedule the momentum schedule
     */
    public Nesterovs(double learningRate, ISchedule momentumSchedule) {
        this(learningRate, null, DEFAULT_NESTEROV_MOMENTUM, momentumSchedule);
    }

    private Nesterovs(double learningRate, ISchedule learningRateSchedule, double momentum,
            ISchedule momentumSchedule) {
        super(learningRate, learningRateSchedule);
        this.momentum = momentum;
        this.momentumSchedule = momentumSchedule;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the fixed momentum (used when no momentum schedule is set) */
    public double getMomentum() {
        return momentum;
    }

    /** @param momentum the new fixed momentum */
    public void setMomentum(double momentum) {
        this.momentum = momentum;
    }

    /** @return the momentum schedule, or null */
    public ISchedule getMomentumSchedule() {
        return momentumSchedule;
    }

    /** @param momentumSchedule the momentum schedule, or null for the fixed momentum */
    public void setMomentumSchedule(ISchedule momentumSchedule) {
        this.momentumSchedule = momentumSchedule;
    }

    /**
     * @param iteration 0-based iteration count
     * @param epoch 0-based epoch count
     * @return the momentum in effect: the schedule's value when set, else the fixed momentum
     */
    public double currentMomentum(int iteration, int epoch) {
        return momentumSchedule != null ? momentumSchedule.valueAt(iteration, epoch) : momentum;
    }

    @Override
    public int stateSizePerParam() {
        return 1;
    }

    @Override
    public Nesterovs clone() {
        return new Nesterovs(getLearningRate(), scheduleCopy(), momentum,
                momentumSchedule == null ? null : momentumSchedule.clone());
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(learningRateProblem(), UpdaterChecks.inUnitInterval("momentum", momentum),
                UpdaterChecks.momentumSchedule(momentumSchedule));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Nesterovs)) {
            return false;
        }
        Nesterovs n = (Nesterovs) o;
        return sameLearningRate(n) && Double.compare(n.momentum, momentum) == 0
                && Objects.equals(n.momentumSchedule, momentumSchedule);
    }

    @Override
    public int hashCode() {
        return Objects.hash("Nesterovs", getLearningRate(), getLearningRateSchedule(), momentum, momentumSchedule);
    }

    @Override
    public String toString() {
        return "Nesterovs(" + learningRateString() + ", momentum=" + momentum
                + (momentumSchedule == null ? "" : ", momentumSchedule=" + momentumSchedule) + ")";
    }

    /** Builds a {@link Nesterovs}; unset values take the defaults. Not thread-safe. */
    public static class Builder {
        private double learningRate = DEFAULT_NESTEROV_LEARNING_RATE;
        private ISchedule learningRateSchedule;
        private double momentum = DEFAULT_NESTEROV_MOMENTUM;
        private ISchedule momentumSchedule;

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
         * @param momentum the fixed momentum, in [0, 1)
         * @return this builder
         */
        public Builder momentum(double momentum) {
            this.momentum = momentum;
            return this;
        }

        /**
         * @param momentumSchedule the momentum schedule (takes precedence over the fixed momentum)
         * @return this builder
         */
        public Builder momentumSchedule(ISchedule momentumSchedule) {
            this.momentumSchedule = momentumSchedule;
            return this;
        }

        /**
         * @return the updater
         * @throws IllegalArgumentException naming the first invalid field and its value
         */
        public Nesterovs build() {
            return UpdaterChecks.checked(new Nesterovs(learningRate, learningRateSchedule, momentum,
                    momentumSchedule));
        }
    }
}
