package org.ferrodl.linalg.learning.config;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * Configuration of a gradient updater (optimizer). Serialized to JSON with a {@code "type"}
 * property naming the implementation: {@code Sgd}, {@code Adam}, {@code AdaMax}, {@code Nadam},
 * {@code AMSGrad}, {@code RmsProp}, {@code Nesterovs}, {@code AdaGrad}, {@code AdaDelta} or
 * {@code NoOp}. The formulas, state layouts and JSON of each are in docs/UPDATERS.md.
 *
 * <p>Constructors and setters accept any value, as in the reference; {@link #validate()} reports
 * the first invalid one, building a configuration refuses it (with an IllegalArgumentException
 * naming the field and the value), and so does each updater's {@code Builder.build()}.
 *
 * <p>Implementations are mutable value objects and not thread-safe.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Sgd.class, name = "Sgd"),
    @JsonSubTypes.Type(value = Adam.class, name = "Adam"),
    @JsonSubTypes.Type(value = AdaMax.class, name = "AdaMax"),
    @JsonSubTypes.Type(value = Nadam.class, name = "Nadam"),
    @JsonSubTypes.Type(value = AMSGrad.class, name = "AMSGrad"),
    @JsonSubTypes.Type(value = RmsProp.class, name = "RmsProp"),
    @JsonSubTypes.Type(value = Nesterovs.class, name = "Nesterovs"),
    @JsonSubTypes.Type(value = AdaGrad.class, name = "AdaGrad"),
    @JsonSubTypes.Type(value = AdaDelta.class, name = "AdaDelta"),
    @JsonSubTypes.Type(value = NoOp.class, name = "NoOp")
})
public interface IUpdater extends Serializable, Cloneable {

    /** @return the fixed learning rate; NaN for updaters without one (AdaDelta, NoOp) */
    double getLearningRate();

    /**
     * @param learningRate the new fixed learning rate
     * @throws UnsupportedOperationException for updaters without a learning rate
     */
    void setLearningRate(double learningRate);

    /**
     * The learning rate in effect at a point of training: the schedule's value when a schedule is
     * set, else the fixed learning rate (NaN for updaters without one).
     *
     * @param iteration 0-based iteration count
     * @param epoch 0-based epoch count
     * @return the learning rate
     */
    default double getLearningRate(int iteration, int epoch) {
        ISchedule s = getLearningRateSchedule();
        return s != null ? s.valueAt(iteration, epoch) : getLearningRate();
    }

    /** @return the learning-rate schedule, or null when the fixed learning rate is used */
    default ISchedule getLearningRateSchedule() {
        return null;
    }

    /** @return whether this updater has a learning rate (false for AdaDelta and NoOp) */
    default boolean hasLearningRate() {
        return true;
    }

    /**
     * Replaces the fixed learning rate and the schedule (null for none).
     *
     * @param lr the fixed learning rate
     * @param lrSchedule the schedule, or null
     * @throws UnsupportedOperationException for updaters without a learning rate
     */
    void setLrAndSchedule(double lr, ISchedule lrSchedule);

    /**
     * Number of state values this updater keeps per parameter (Sgd, NoOp 0; Nesterovs, RmsProp,
     * AdaGrad 1; Adam, AdaMax, Nadam, AdaDelta 2; AMSGrad 3).
     *
     * @return state entries per parameter
     */
    int stateSizePerParam();

    /**
     * @param numParams number of parameters updated by this updater
     * @return the number of state values kept for them
     */
    default long stateSize(long numParams) {
        return stateSizePerParam() * numParams;
    }

    /** @return an independent copy */
    IUpdater clone();

    /**
     * Checks the hyper-parameters.
     *
     * @return null when valid, else a description of the first problem, naming the field and value
     */
    String validate();
}
