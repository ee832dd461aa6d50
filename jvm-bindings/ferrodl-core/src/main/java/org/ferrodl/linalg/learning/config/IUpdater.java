package org.ferrodl.linalg.learning.config;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;

/**
 * Configuration of a gradient updater (optimizer). Serialized to JSON with a {@code "type"}
 * property naming the implementation: {@code Sgd}, {@code Adam} or {@code Nesterovs}.
 *
 * <p>Implementations are mutable value objects and not thread-safe.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Sgd.class, name = "Sgd"),
    @JsonSubTypes.Type(value = Adam.class, name = "Adam"),
    @JsonSubTypes.Type(value = Nesterovs.class, name = "Nesterovs")
})
public interface IUpdater extends Serializable, Cloneable {

    /** @return the learning rate */
    double getLearningRate();

    /** @param learningRate the new learning rate */
    void setLearningRate(double learningRate);

    /**
     * Number of state values this updater keeps per parameter (Sgd 0, Nesterovs 1, Adam 2).
     *
     * @return state entries per parameter
     */
    int stateSizePerParam();

    /** @return an independent copy */
    IUpdater clone();

    /**
     * Checks the hyper-parameters.
     *
     * @return null when valid, else a description of the problem
     */
    String validate();
}
