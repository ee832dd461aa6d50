package org.ferrodl.spark.api;

import java.io.Serializable;
import org.ferrodl.spark.impl.common.NetworkKind;

/**
 * The executor side of a training master: a serializable function run on every partition of a
 * fit step, rebuilding the driver's network (of the kind it names) and returning a
 * {@link TrainingResult} of type {@code R}. One worker class per master serves both network types
 * through {@link NetworkKind}. The type a master's {@link TrainingMaster} signature names as
 * {@code W}.
 *
 * @param <R> the result it returns
 */
public interface TrainingWorker<R extends TrainingResult> extends Serializable {

    /** @return the network type (and minibatch type) this worker trains */
    NetworkKind<?, ?> getNetworkKind();
}
