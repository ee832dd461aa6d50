package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.linalg.dataset.api.iterator.MultiDataSetIterator;
import org.ferrodl.nn.graph.ComputationGraph;

/**
 * {@link DataSetLossCalculator} for a {@link ComputationGraph}: the graph's loss (score, with
 * regularization) on held-out MultiDataSets, or DataSets for a graph with one input and one
 * output; per-minibatch scores weighted by minibatch size, averaged per example
 * ({@code average}) or summed. Lower is better.
 */
public class DataSetLossCalculatorCG implements ScoreCalculator<ComputationGraph> {
    private static final long serialVersionUID = 1L;
    private final transient DataSetIterator dataSetIterator;
    private final transient MultiDataSetIterator multiDataSetIterator;
    private final boolean average;

    public DataSetLossCalculatorCG(DataSetIterator dataSetIterator, boolean average) {
        this.dataSetIterator = Objects.requireNonNull(dataSetIterator, "dataSetIterator");
        this.multiDataSetIterator = null;
        this.average = average;
    }

    public DataSetLossCalculatorCG(MultiDataSetIterator multiDataSetIterator, boolean average) {
        this.dataSetIterator = null;
        this.multiDataSetIterator = Objects.requireNonNull(multiDataSetIterator, "multiDataSetIterator");
        this.average = average;
    }

    @Override
    public double calculateScore(ComputationGraph network) {
        boolean multi = multiDataSetIterator != null;
        if (multi ? multiDataSetIterator.resetSupported() : dataSetIterator.resetSupported()) {
            if (multi) {
                multiDataSetIterator.reset();
            } else {
                dataSetIterator.reset();
            }
        }
        double sum = 0;
        long n = 0;
        while (multi ? multiDataSetIterator.hasNext() : dataSetIterator.hasNext()) {
            org.ferrodl.linalg.dataset.api.MultiDataSet batch = multi ? multiDataSetIterator.next() : MultiDataSet.fromDataSet(dataSetIterator.next());
            int rows = batch.numExamples();
            sum += network.score(batch) * rows;
            n += rows;
        }
        if (n == 0) {
            throw new IllegalStateException("DataSetLossCalculatorCG: the score iterator holds no data "
                    + "(and cannot be reset)");
        }
        return average ? sum / n : sum;
    }

    @Override
    public boolean minimizeScore() {
        return true;
    }

    @Override
    public String toString() {
        return "DataSetLossCalculatorCG(average=" + average + ")";
    }
}
