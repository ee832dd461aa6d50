package org.ferrodl.earlystopping.scorecalc;

import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.api.Model;

/**
 * The network's loss (score, with regularization) on held-out data: per-minibatch scores weighted
 * by minibatch size, averaged per example ({@code average}) or summed. Lower is better.
 */
public class DataSetLossCalculator extends BaseIteratorScoreCalculator {
    private static final long serialVersionUID = 1L;
    private final boolean average;

    public DataSetLossCalculator(DataSetIterator iterator, boolean average) {
        super(iterator);
        this.average = average;
    }

    @Override
    public double calculateScore(Model network) {
        double[] sum = new double[1];
        long[] n = new long[1];
        forEach(ds -> {
            sum[0] += score(network, ds) * ds.numExamples();
            n[0] += ds.numExamples();
        });
        return average ? sum[0] / n[0] : sum[0];
    }

    @Override
    public boolean minimizeScore() {
        return true;
    }

    @Override
    public String toString() {
        return "DataSetLossCalculator(average=" + average + ")";
    }
}
