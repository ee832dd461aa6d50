package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.api.Model;

/** A classification metric (accuracy, F1, ...) on held-out data. Higher is better. */
public class ClassificationScoreCalculator extends BaseIteratorScoreCalculator {
    private static final long serialVersionUID = 1L;
    private final Evaluation.Metric metric;

    public ClassificationScoreCalculator(Evaluation.Metric metric, DataSetIterator iterator) {
        super(iterator);
        this.metric = Objects.requireNonNull(metric, "metric");
    }

    @Override
    public double calculateScore(Model network) {
        Evaluation e = new Evaluation();
        forEach(ds -> e.eval(ds.getLabels(), output(network, ds), ds.getLabelsMaskArray()));
        return e.scoreForMetric(metric);
    }

    @Override
    public boolean minimizeScore() {
        return metric.minimize();
    }

    @Override
    public String toString() {
        return "ClassificationScoreCalculator(" + metric + ")";
    }
}
