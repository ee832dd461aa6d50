package org.ferrodl.spark.api;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.api.Model;

/**
 * Code a training master runs on every worker around each minibatch update: before the network
 * fits {@code minibatch} and after. Hooks run on the executors (they are serialized with the
 * master), once per minibatch and worker, in the order they were added. Hooks travel in the
 * master's JSON/YAML by class name, so a hook class needs a no-argument constructor to be read back.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.CLASS, include = JsonTypeInfo.As.PROPERTY, property = "@class")
public interface TrainingHook extends Serializable {

    /** Called before the worker's network fits {@code minibatch}. */
    void preUpdate(DataSet minibatch, Model model);

    /** Called after the worker's network fitted {@code minibatch}. */
    void postUpdate(DataSet minibatch, Model model);

    /** MultiDataSet form of {@link #preUpdate(DataSet, Model)} (for graph training); no-op by default. */
    default void preUpdate(MultiDataSet minibatch, Model model) {
    }

    /** MultiDataSet form of {@link #postUpdate(DataSet, Model)}; no-op by default. */
    default void postUpdate(MultiDataSet minibatch, Model model) {
    }
}
