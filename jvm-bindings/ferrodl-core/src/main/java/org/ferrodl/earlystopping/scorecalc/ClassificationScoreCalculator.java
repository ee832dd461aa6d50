package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/** A classification metric (accuracy, F1, ...) on held-out data. Higher is better. */
public class ClassificationScoreCalculator extends BaseIteratorScoreCalculator {
    private static final long serialVersionUID = 1L;
    private final Evaluation.Metric metric;

    public ClassificationScoreCalculator(Evaluation.Metric metric, DataSetIterator iterator) {
        super(iterator);
        this.metric = Objects.requireNonNull(metric, "metric");
    }

    @Override
    public double calculateScore(MultiLayerNetwork network) {
        Evaluation e = new Evaluation();
        forEach(ds -> e.eval(ds.getLabels(), network.output(ds.getFeatures(), false), ds.getLabelsMaskArray()));
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
