package org.ferrodl.spark.impl.common;

import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.optimize.api.TrainingListener;

/**
 * What a training master needs of a Spark network wrapper ({@code SparkDl4jMultiLayer},
 * {@code SparkComputationGraph}): its context, the driver's network and its kind, the listeners the
 * workers attach, and the places where a fit leaves its score and the state it carries to the
 * next fit. The masters are written once against this interface.
 *
 * @param <N> the network type
 * @param <B> the minibatch type it trains on
 */
public interface SparkNetwork<N extends NativeHandleOwner & Model, B> {

    JavaSparkContext getSparkContext();

    /** The network on the driver, updated in place by every fit. */
    N getNetwork();

    /** How the Spark code handles this network type. */
    NetworkKind<N, B> getNetworkKind();

    /** Listeners every training worker attaches to its network. */
    List<TrainingListener> getListeners();

    /** Called by training masters at the end of a fit. */
    void setScore(double score);

    /** State a training master carries from one fit of this network to the next; null when none. */
    String getCarriedTrainingState(String key);

    /** Stores (or, with null, removes) state carried to the next fit of this network. */
    void setCarriedTrainingState(String key, String value);
}
