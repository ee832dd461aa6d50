package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * A calculator that runs the network over a (resettable) iterator of held-out DataSets: a
 * MultiLayerNetwork, or a ComputationGraph with one input and one output (as the reference's
 * calculators, which take any {@code Model}).
 */
abstract class BaseIteratorScoreCalculator implements ScoreCalculator<Model> {
    private static final long serialVersionUID = 1L;

    protected final transient DataSetIterator iterator;

    BaseIteratorScoreCalculator(DataSetIterator iterator) {
        this.iterator = Objects.requireNonNull(iterator, "iterator");
    }

    /** Resets the iterator when it can be and feeds every minibatch to {@code each}. */
    protected void forEach(java.util.function.Consumer<DataSet> each) {
        if (iterator.resetSupported()) {
            iterator.reset();
        }
        if (!iterator.hasNext()) {
            throw new IllegalStateException(getClass().getSimpleName() + ": the score iterator holds no data "
                    + "(and cannot be reset)");
        }
        while (iterator.hasNext()) {
            each.accept(iterator.next());
        }
    }

    /** The network's inference output for {@code ds}'s features. */
    protected static INDArray output(Model network, DataSet ds) {
        if (network instanceof MultiLayerNetwork n) {
            return n.output(ds.getFeatures(), false);
        }
        return graph(network).outputSingle(false, ds.getFeatures());
    }

    /** The network's score (loss with regularization) of {@code ds}. */
    protected static double score(Model network, DataSet ds) {
        if (network instanceof MultiLayerNetwork n) {
            return n.score(ds);
        }
        return graph(network).score(ds);
    }

    private static ComputationGraph graph(Model network) {
        if (network instanceof ComputationGraph g) {
            if (g.getConfiguration().getNetworkInputs().size() != 1 || g.getConfiguration().getNetworkOutputs().size() != 1) {
                throw new IllegalArgumentException("a score calculator on DataSets needs a graph with one input and one "
                        + "output; this graph has inputs " + g.getConfiguration().getNetworkInputs() + " and outputs "
                        + g.getConfiguration().getNetworkOutputs() + " (use DataSetLossCalculatorCG with MultiDataSets)");
            }
            return g;
        }
        throw new IllegalArgumentException("score calculators take a MultiLayerNetwork or a ComputationGraph, got "
                + (network == null ? "null" : network.getClass().getName()));
    }
}
