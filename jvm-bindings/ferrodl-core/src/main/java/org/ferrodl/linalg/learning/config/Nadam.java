package org.ferrodl.linalg.learning.config;

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
public class Nadam extends BaseMomentUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_NADAM_LEARNING_RATE = 1e-3;
    /** Default β1, 0.9. */
    public static final double DEFAULT_NADAM_BETA1_MEAN_DECAY = 0.9;
    /** Default β2, 0.999. */
    public static final double DEFAULT_NADAM_BETA2_VAR_DECAY = 0.999;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_NADAM_EPSILON = 1e-8;

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
        this(DEFAULT_NADAM_LEARNING_RATE, learningRateSchedule, DEFAULT_NADAM_BETA1_MEAN_DECAY, DEFAULT_NADAM_BETA2_VAR_DECAY, DEFAULT_NADAM_EPSILON);
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

    private Nadam(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
        super(learningRate, learningRateSchedule, beta1, beta2, epsilon);
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public int stateSizePerParam() {
        return 2;
    }

    @Override
    public Nadam clone() {
        return new Nadam(getLearningRate(), scheduleCopy(), getBeta1(), getBeta2(), getEpsilon());
    }

    /** Builds a {@link Nadam}; unset values take the defaults. Not thread-safe. */
    public static class Builder extends BaseMomentUpdater.Builder<Nadam, Builder> {
        /** Starts from the defaults. */
        public Builder() {
            super(DEFAULT_NADAM_LEARNING_RATE, DEFAULT_NADAM_BETA1_MEAN_DECAY, DEFAULT_NADAM_BETA2_VAR_DECAY, DEFAULT_NADAM_EPSILON);
        }

        @Override
        Nadam create(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
            return new Nadam(learningRate, learningRateSchedule, beta1, beta2, epsilon);
        }
    }
}
