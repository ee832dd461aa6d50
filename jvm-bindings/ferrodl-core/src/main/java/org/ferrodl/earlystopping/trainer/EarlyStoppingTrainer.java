package org.ferrodl.earlystopping.trainer;

import java.util.Objects;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.termination.IterationTerminationCondition;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Early stopping for a {@link MultiLayerNetwork} on one machine: each epoch fits every minibatch of
 * the (reset) training iterator, checking the iteration conditions after each; see
 * {@link BaseEarlyStoppingTrainer}. The network trains in place; the result holds the best copy.
 */
public class EarlyStoppingTrainer extends BaseEarlyStoppingTrainer<MultiLayerNetwork> {
    private final DataSetIterator train;

    public EarlyStoppingTrainer(EarlyStoppingConfiguration<MultiLayerNetwork> config, MultiLayerNetwork net,
                                DataSetIterator train) {
        super(config, net);
        this.train = Objects.requireNonNull(train, "train");
    }

    @Override
    protected IterationTerminationCondition fitEpoch() {
        if (train.resetSupported()) {
            train.reset();
        }
        if (!train.hasNext()) {
            throw new IllegalStateException("early stopping: the training iterator holds no data (and cannot be reset)");
        }
        while (train.hasNext()) {
            net.fit(train.next());
            IterationTerminationCondition fired = checkIteration(net.score());
            if (fired != null) {
                return fired;
            }
        }
        net.incrementEpochCount();
        return null;
    }
}
