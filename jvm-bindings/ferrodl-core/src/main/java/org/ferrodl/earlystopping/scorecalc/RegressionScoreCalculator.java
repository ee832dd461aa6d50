package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.api.Model;

/** A regression metric (MSE, MAE, R², ...; averaged over columns) on held-out data. */
public class RegressionScoreCalculator extends BaseIteratorScoreCalculator {
    private static final long serialVersionUID = 1L;
    private final RegressionEvaluation.Metric metric;

    public RegressionScoreCalculator(RegressionEvaluation.Metric metric, DataSetIterator iterator) {
        super(iterator);
        this.metric = Objects.requireNonNull(metric, "metric");
    }

    @Override
    public double calculateScore(Model network) {
        RegressionEvaluation e = new RegressionEvaluation();
        forEach(ds -> e.eval(ds.getLabels(), output(network, ds), ds.getLabelsMaskArray()));
        return e.scoreForMetric(metric);
    }

    @Override
    public boolean minimizeScore() {
        return metric.minimize();
    }

    @Override
    public String toString() {
        return "RegressionScoreCalculator(" + metric + ")";
    }
}
