package org.ferrodl.spark.earlystopping;

import java.util.Objects;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.termination.IterationTerminationCondition;
import org.ferrodl.earlystopping.trainer.BaseEarlyStoppingTrainer;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.impl.common.BaseSparkNetwork;

/**
 * Early stopping with distributed training, for either Spark wrapper: each epoch is one fit of
 * the training RDD with the wrapper's master; the iteration termination conditions are checked
 * after each such fit with its score (the mean of the workers' last minibatch scores), since the
 * driver does not see the workers' minibatches. Scoring, saving and the epoch conditions are
 * those of {@link BaseEarlyStoppingTrainer}.
 *
 * @param <T> the network type
 * @param <B> the training RDD's element type
 * @param <S> the Spark wrapper
 */
abstract class BaseSparkEarlyStoppingTrainer<T extends NativeHandleOwner & Model, B,
        S extends BaseSparkNetwork<T, ?>> extends BaseEarlyStoppingTrainer<T> {
    private final S sparkNetwork;
    private final JavaRDD<B> train;

    BaseSparkEarlyStoppingTrainer(EarlyStoppingConfiguration<T> esConfig, T net, S sparkNetwork, JavaRDD<B> train) {
        super(esConfig, net);
        this.sparkNetwork = sparkNetwork;
        this.train = Objects.requireNonNull(train, "train");
    }

    /** One pass of {@code sparkNetwork} over {@code train}. */
    abstract void fit(S sparkNetwork, JavaRDD<B> train);

    /** The Spark wrapper that trains the network (e.g. for its training statistics). */
    public S getSparkNetwork() {
        return sparkNetwork;
    }

    @Override
    protected IterationTerminationCondition fitEpoch() {
        fit(sparkNetwork, train);
        return checkIteration(sparkNetwork.getScore());
    }
}
