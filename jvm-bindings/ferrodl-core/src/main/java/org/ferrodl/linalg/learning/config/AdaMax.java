package org.ferrodl.linalg.learning.config;

import org.ferrodl.linalg.schedule.ISchedule;

/**
 * The AdaMax updater, the infinity-norm variant of Adam (Kingma and Ba, 2014). With
 * {@code t = iteration + 1}: {@code m = β1·m + (1-β1)·g}, {@code u = max(β2·u, |g|)},
 * {@code update = lr/(1-β1^t) · m/(u+ε)}. State per parameter block: {@code m} then {@code u}.
 *
 * <p>JSON: {@code {"type":"AdaMax","learningRate":0.001,"beta1":0.9,"beta2":0.999,"epsilon":1e-8}},
 * plus {@code "learningRateSchedule":{...}} when a schedule is set.
 */
public class AdaMax extends BaseMomentUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_ADAMAX_LEARNING_RATE = 1e-3;
    /** Default β1, 0.9. */
    public static final double DEFAULT_ADAMAX_BETA1_MEAN_DECAY = 0.9;
    /** Default β2, 0.999. */
    public static final double DEFAULT_ADAMAX_BETA2_VAR_DECAY = 0.999;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_ADAMAX_EPSILON = 1e-8;

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
        this(DEFAULT_ADAMAX_LEARNING_RATE, learningRateSchedule, DEFAULT_ADAMAX_BETA1_MEAN_DECAY, DEFAULT_ADAMAX_BETA2_VAR_DECAY, DEFAULT_ADAMAX_EPSILON);
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

    private AdaMax(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
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
    public AdaMax clone() {
        return new AdaMax(getLearningRate(), scheduleCopy(), getBeta1(), getBeta2(), getEpsilon());
    }

    /** Builds a {@link AdaMax}; unset values take the defaults. Not thread-safe. */
    public static class Builder extends BaseMomentUpdater.Builder<AdaMax, Builder> {
        /** Starts from the defaults. */
        public Builder() {
            super(DEFAULT_ADAMAX_LEARNING_RATE, DEFAULT_ADAMAX_BETA1_MEAN_DECAY, DEFAULT_ADAMAX_BETA2_VAR_DECAY, DEFAULT_ADAMAX_EPSILON);
        }

        @Override
        AdaMax create(double learningRate, ISchedule learningRateSchedule, double beta1, double beta2, double epsilon) {
            return new AdaMax(learningRate, learningRateSchedule, beta1, beta2, epsilon);
        }
    }
}
