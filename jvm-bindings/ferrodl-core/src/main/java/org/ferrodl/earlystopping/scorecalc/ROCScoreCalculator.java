package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCBinary;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.api.Model;

/**
 * Area under the ROC or precision-recall curve on held-out data (exact): of the one output
 * ({@link ROCType#ROC}), or the mean over outputs ({@link ROCType#BINARY}) or one-vs-all classes
 * ({@link ROCType#MULTICLASS}). Higher is better.
 */
public class ROCScoreCalculator extends BaseIteratorScoreCalculator {
    private static final long serialVersionUID = 1L;

    /** Which ROC evaluation to run. */
    public enum ROCType { ROC, BINARY, MULTICLASS }

    /** Which area to return. */
    public enum Metric { AUC, AUPRC }

    private final ROCType type;
    private final Metric metric;

    /** AUC of the given type. */
    public ROCScoreCalculator(ROCType type, DataSetIterator iterator) {
        this(type, Metric.AUC, iterator);
    }

    public ROCScoreCalculator(ROCType type, Metric metric, DataSetIterator iterator) {
        super(iterator);
        this.type = Objects.requireNonNull(type, "type");
        this.metric = Objects.requireNonNull(metric, "metric");
    }

    @Override
    public double calculateScore(Model network) {
        switch (type) {
            case ROC: {
                ROC r = new ROC();
                forEach(ds -> r.eval(ds.getLabels(), output(network, ds), ds.getLabelsMaskArray()));
                return metric == Metric.AUC ? r.calculateAUC() : r.calculateAUCPR();
            }
            case BINARY: {
                ROCBinary r = new ROCBinary();
                forEach(ds -> r.eval(ds.getLabels(), output(network, ds), ds.getLabelsMaskArray()));
                return metric == Metric.AUC ? r.calculateAverageAuc() : r.calculateAverageAUCPR();
            }
            default: {
                ROCMultiClass r = new ROCMultiClass();
                forEach(ds -> r.eval(ds.getLabels(), output(network, ds), ds.getLabelsMaskArray()));
                return metric == Metric.AUC ? r.calculateAverageAUC() : r.calculateAverageAUCPR();
            }
        }
    }

    @Override
    public boolean minimizeScore() {
        return false;
    }

    @Override
    public String toString() {
        return "ROCScoreCalculator(" + type + ", " + metric + ")";
    }
}
