package org.ferrodl.linalg.learning.config;

import org.ferrodl.linalg.schedule.ISchedule;

/**
 * The AMSGrad updater (Reddi et al., 2018), Adam with a non-decreasing second moment. With
 * {@code t = iteration + 1}: {@code m = β1·m + (1-β1)·g}, {@code v = β2·v + (1-β2)·g²},
 * {@code v̂ = max(v̂, v)}, {@code update = lr·sqrt(1-β2^t)/(1-β1^t) · m/(sqrt(v̂)+ε)}.
 * State per parameter block: {@code m}, {@code v}, then {@code v̂}.
 *
 * <p>JSON: {@code {"type":"AMSGrad","learningRate":0.001,"beta1":0.9,"beta2":0.999,"epsilon":1e-8}},
 * plus {@code "learningRateSchedule":{...}} when a schedule is set.
 */
public class AMSGrad extends BaseMomentUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_AMSGRAD_LEARNING_RATE = 1e-3;
    /** Default β1, 0.9. */
    public static final double DEFAULT_AMSGRAD_BETA1_MEAN_DECAY = 0.9;
    /** Default β2, 0.999. */
    public static final double DEFAULT_AMSGRAD_BETA2_VAR_DECAY = 0.999;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_AMSGRAD_EPSILON = 1e-8;

    /** AMSGrad with the default hyper-parameters (1e-3, 0.9, 0.999, 1e-8). */
    public AMSGrad() {
        this(DEFAULT_AMSGRAD_LEARNING_RATE);
    }

    /** @param learningRate the learning rate; the other hyper-parameters take their defaults */
    public AMSGrad(double learningRate) {
        this(learningRate, DEFAULT_AMSGRAD_BETA1_MEAN_DECAY, DEFAULT_AMSGRAD_BETA2_VAR_DECAY, DEFAULT_AMSGRAD_EPSILON);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule; the other hyper-parameters take their
     *     defaults (the fixed learning rate keeps its default and is not used)
     */
    public AMSGrad(ISchedule learningRateSchedule) {
        this(DEFAULT_AMSGRAD_LEARNING_RATE, learningRateSchedule, DEFAULT_AMSGRAD_BETA1_MEAN_DECAY, DEFAULT_AMSGRAD_BETA2_VAR_DECAY, DEFAULT_AMSGRAD_EPSILON);
    }

    /**
     * @param learningRate the learning rate
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public AMSGrad(double learningRate, double beta1, double beta2, double epsilon) {
        this(learningRate, null, beta1, beta2, epsilon);
    }

    /**
     * @param learningRateSchedule the learning-rate schedule
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public AMSGrad(ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
        this(DEFAULT_AMSGRAD_LEARNING_RATE, learningRateSchedule, beta1, beta2, epsilon);
    }

    private AMSGrad(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
        super(learningRate, learningRateSchedule, beta1, beta2, epsilon);
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public int stateSizePerParam() {
        return 3;
    }

    @Override
    public AMSGrad clone() {
        return new AMSGrad(getLearningRate(), scheduleCopy(), getBeta1(), getBeta2(), getEpsilon());
    }

    /** Builds a {@link AMSGrad}; unset values take the defaults. Not thread-safe. */
    public static class Builder extends BaseMomentUpdater.Builder<AMSGrad, Builder> {
        /** Starts from the defaults. */
        public Builder() {
            super(DEFAULT_AMSGRAD_LEARNING_RATE, DEFAULT_AMSGRAD_BETA1_MEAN_DECAY, DEFAULT_AMSGRAD_BETA2_VAR_DECAY, DEFAULT_AMSGRAD_EPSILON);
        }

        @Override
        AMSGrad create(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
            return new AMSGrad(learningRate, learningRateSchedule, beta1, beta2, epsilon);
        }
    }
}
