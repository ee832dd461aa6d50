package org.ferrodl.earlystopping.trainer;

import java.util.Objects;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.termination.IterationTerminationCondition;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.linalg.dataset.api.iterator.MultiDataSetIterator;
import org.ferrodl.nn.graph.ComputationGraph;

/**
 * Early stopping for a {@link ComputationGraph} on one machine, as {@link EarlyStoppingTrainer}
 * for a MultiLayerNetwork: each epoch fits every minibatch of the (reset) training iterator —
 * MultiDataSets, or DataSets for a graph with one input and one output — checking the iteration
 * conditions after each; see {@link BaseEarlyStoppingTrainer}. The graph trains in place.
 */
public class EarlyStoppingGraphTrainer extends BaseEarlyStoppingTrainer<ComputationGraph> {
    private final DataSetIterator train;
    private final MultiDataSetIterator trainMulti;

    /** Trains a graph with one input and one output on DataSets. */
    public EarlyStoppingGraphTrainer(EarlyStoppingConfiguration<ComputationGraph> esConfig, ComputationGraph net,
                                     DataSetIterator train) {
        super(esConfig, net);
        if (net.getConfiguration().getNetworkInputs().size() != 1
                || net.getConfiguration().getNetworkOutputs().size() != 1) {
            throw new IllegalArgumentException("EarlyStoppingGraphTrainer: a DataSetIterator can train only a graph "
                    + "with one input and one output; this graph has inputs "
                    + net.getConfiguration().getNetworkInputs() + " and outputs "
                    + net.getConfiguration().getNetworkOutputs() + " (use a MultiDataSetIterator)");
        }
        this.train = Objects.requireNonNull(train, "train");
        this.trainMulti = null;
    }

    /** Trains on MultiDataSets (one features array per input, one labels array per output). */
    public EarlyStoppingGraphTrainer(EarlyStoppingConfiguration<ComputationGraph> esConfig, ComputationGraph net,
                                     MultiDataSetIterator train) {
        super(esConfig, net);
        this.train = null;
        this.trainMulti = Objects.requireNonNull(train, "train");
    }

    @Override
    protected IterationTerminationCondition fitEpoch() {
        boolean reset = train != null ? train.resetSupported() : trainMulti.resetSupported();
        if (reset) {
            if (train != null) {
                train.reset();
            } else {
                trainMulti.reset();
            }
        }
        if (!(train != null ? train.hasNext() : trainMulti.hasNext())) {
            throw new IllegalStateException("early stopping: the training iterator holds no data (and cannot be reset)");
        }
        while (train != null ? train.hasNext() : trainMulti.hasNext()) {
            org.ferrodl.linalg.dataset.api.MultiDataSet batch = train != null ? MultiDataSet.fromDataSet(train.next()) : trainMulti.next();
            net.fit(batch);
            IterationTerminationCondition fired = checkIteration(net.score());
            if (fired != null) {
                return fired;
            }
        }
        net.incrementEpochCount();
        return null;
    }
}
