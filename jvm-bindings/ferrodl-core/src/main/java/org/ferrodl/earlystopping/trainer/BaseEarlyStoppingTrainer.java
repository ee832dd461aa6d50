package org.ferrodl.earlystopping.trainer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.EarlyStoppingResult;
import org.ferrodl.earlystopping.EarlyStoppingResult.TerminationReason;
import org.ferrodl.earlystopping.listener.EarlyStoppingListener;
import org.ferrodl.earlystopping.termination.EpochTerminationCondition;
import org.ferrodl.earlystopping.termination.IterationTerminationCondition;
import org.ferrodl.nn.api.Model;

/**
 * The early-stopping loop shared by the local and the Spark trainers: train one epoch (subclasses
 * say how, checking the iteration conditions as they go), score it every
 * {@code evaluateEveryNEpochs} epochs, keep the best model, and stop when an epoch condition fires.
 * An exception from training or scoring ends the run with {@link TerminationReason#Error} and the
 * best model so far.
 */
public abstract class BaseEarlyStoppingTrainer<T extends Model> {
    protected final EarlyStoppingConfiguration<T> config;
    protected final T net;
    private EarlyStoppingListener<T> listener;

    protected BaseEarlyStoppingTrainer(EarlyStoppingConfiguration<T> config, T net) {
        this.config = Objects.requireNonNull(config, "config");
        this.net = Objects.requireNonNull(net, "net");
    }

    public void setListener(EarlyStoppingListener<T> listener) {
        this.listener = listener;
    }

    /**
     * Trains one epoch.
     *
     * @return the iteration condition that fired (training stops at once), or null
     */
    protected abstract IterationTerminationCondition fitEpoch();

    /** Checks every iteration condition against {@code score}; returns the first that fires, or null. */
    protected IterationTerminationCondition checkIteration(double score) {
        for (IterationTerminationCondition c : config.getIterationTerminationConditions()) {
            if (c.terminate(score)) {
                return c;
            }
        }
        return null;
    }

    /** Runs the early-stopping loop and returns its result. */
    public EarlyStoppingResult<T> fit() {
        config.getEpochTerminationConditions().forEach(EpochTerminationCondition::initialize);
        config.getIterationTerminationConditions().forEach(IterationTerminationCondition::initialize);
        if (listener != null) {
            listener.onStart(config, net);
        }
        boolean minimize = config.getScoreCalculator().minimizeScore();
        Map<Integer, Double> scoreVsEpoch = new LinkedHashMap<>();
        int bestEpoch = -1;
        double bestScore = minimize ? Double.MAX_VALUE : -Double.MAX_VALUE;
        int epoch = 0;
        EarlyStoppingResult<T> result;
        try {
            while (true) {
                IterationTerminationCondition fired = fitEpoch();
                if (fired != null) {
                    result = result(TerminationReason.IterationTerminationCondition, fired.toString(), scoreVsEpoch,
                            bestEpoch, bestScore, epoch + 1);
                    break;
                }
                double score = Double.NaN;
                boolean last = false;
                if ((epoch + 1) % config.getEvaluateEveryNEpochs() == 0) {
                    score = config.getScoreCalculator().calculateScore(net);
                    scoreVsEpoch.put(epoch, score);
                    boolean better = !Double.isNaN(score) && (minimize ? score < bestScore : score > bestScore);
                    if (better || bestEpoch < 0) {
                        bestScore = score;
                        bestEpoch = epoch;
                        config.getModelSaver().saveBestModel(net, score);
                    }
                    if (config.isSaveLastModel()) {
                        config.getModelSaver().saveLatestModel(net, score);
                    }
                }
                if (listener != null) {
                    listener.onEpoch(epoch, score, config, net);
                }
                EpochTerminationCondition stop = null;
                for (EpochTerminationCondition c : config.getEpochTerminationConditions()) {
                    if (c.terminate(epoch, score, minimize)) {
                        stop = c;
                        break;
                    }
                }
                if (stop != null) {
                    result = result(TerminationReason.EpochTerminationCondition, stop.toString(), scoreVsEpoch,
                            bestEpoch, bestScore, epoch + 1);
                    break;
                }
                epoch++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("early stopping: the model saver failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            result = result(TerminationReason.Error, e.toString(), scoreVsEpoch, bestEpoch, bestScore, epoch + 1);
        }
        if (listener != null) {
            listener.onCompletion(result);
        }
        return result;
    }

    private EarlyStoppingResult<T> result(TerminationReason reason, String details, Map<Integer, Double> scores,
                                          int bestEpoch, double bestScore, int totalEpochs) {
        T best;
        try {
            best = bestEpoch < 0 ? null : config.getModelSaver().getBestModel();
        } catch (IOException e) {
            throw new UncheckedIOException("early stopping: cannot read the best model back: " + e.getMessage(), e);
        }
        return new EarlyStoppingResult<>(reason, details, scores, bestEpoch, bestEpoch < 0 ? Double.NaN : bestScore,
                totalEpochs, best);
    }
}
