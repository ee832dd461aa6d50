package org.ferrodl.earlystopping;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.ferrodl.earlystopping.saver.InMemoryModelSaver;
import org.ferrodl.earlystopping.scorecalc.ScoreCalculator;
import org.ferrodl.earlystopping.termination.EpochTerminationCondition;
import org.ferrodl.earlystopping.termination.IterationTerminationCondition;
import org.ferrodl.nn.api.Model;

/**
 * How an early-stopping run trains: when to stop (epoch and iteration termination conditions), how
 * to score the network after an epoch (every {@code evaluateEveryNEpochs} epochs, with the score
 * calculator), and where to keep the best (and optionally the latest) model. At least one
 * termination condition is required, so a run always ends.
 */
public class EarlyStoppingConfiguration<T extends Model> implements Serializable {
    private static final long serialVersionUID = 1L;

    private final EarlyStoppingModelSaver<T> modelSaver;
    private final List<EpochTerminationCondition> epochTerminationConditions;
    private final List<IterationTerminationCondition> iterationTerminationConditions;
    private final boolean saveLastModel;
    private final int evaluateEveryNEpochs;
    private final ScoreCalculator<? super T> scoreCalculator;

    private EarlyStoppingConfiguration(Builder<T> b) {
        this.modelSaver = b.modelSaver;
        this.epochTerminationConditions = Collections.unmodifiableList(new ArrayList<>(b.epochConditions));
        this.iterationTerminationConditions = Collections.unmodifiableList(new ArrayList<>(b.iterationConditions));
        this.saveLastModel = b.saveLastModel;
        this.evaluateEveryNEpochs = b.evaluateEveryNEpochs;
        this.scoreCalculator = b.scoreCalculator;
    }

    public EarlyStoppingModelSaver<T> getModelSaver() {
        return modelSaver;
    }

    public List<EpochTerminationCondition> getEpochTerminationConditions() {
        return epochTerminationConditions;
    }

    public List<IterationTerminationCondition> getIterationTerminationConditions() {
        return iterationTerminationConditions;
    }

    public boolean isSaveLastModel() {
        return saveLastModel;
    }

    public int getEvaluateEveryNEpochs() {
        return evaluateEveryNEpochs;
    }

    public ScoreCalculator<? super T> getScoreCalculator() {
        return scoreCalculator;
    }

    /** Builder; defaults: in-memory saver, score every epoch, latest model not saved. */
    public static class Builder<T extends Model> {
        private EarlyStoppingModelSaver<T> modelSaver;
        private final List<EpochTerminationCondition> epochConditions = new ArrayList<>();
        private final List<IterationTerminationCondition> iterationConditions = new ArrayList<>();
        private boolean saveLastModel;
        private int evaluateEveryNEpochs = 1;
        private ScoreCalculator<? super T> scoreCalculator;

        /** Where the best (and latest) models are kept; default {@link InMemoryModelSaver}. */
        public Builder<T> modelSaver(EarlyStoppingModelSaver<T> saver) {
            this.modelSaver = Objects.requireNonNull(saver, "modelSaver");
            return this;
        }

        /** Conditions checked after every epoch. */
        public Builder<T> epochTerminationConditions(EpochTerminationCondition... conditions) {
            return epochTerminationConditions(Arrays.asList(conditions));
        }

        public Builder<T> epochTerminationConditions(List<EpochTerminationCondition> conditions) {
            epochConditions.clear();
            for (EpochTerminationCondition c : conditions) {
                epochConditions.add(Objects.requireNonNull(c, "epoch termination condition"));
            }
            return this;
        }

        /** Conditions checked after every minibatch (Spark: after every distributed fit). */
        public Builder<T> iterationTerminationConditions(IterationTerminationCondition... conditions) {
            return iterationTerminationConditions(Arrays.asList(conditions));
        }

        public Builder<T> iterationTerminationConditions(List<IterationTerminationCondition> conditions) {
            iterationConditions.clear();
            for (IterationTerminationCondition c : conditions) {
                iterationConditions.add(Objects.requireNonNull(c, "iteration termination condition"));
            }
            return this;
        }

        /** Also keep the model of the last epoch (default false). */
        public Builder<T> saveLastModel(boolean saveLastModel) {
            this.saveLastModel = saveLastModel;
            return this;
        }

        /** Score the network every N epochs (default 1); epochs in between have no score. */
        public Builder<T> evaluateEveryNEpochs(int everyNEpochs) {
            if (everyNEpochs < 1) {
                throw new IllegalArgumentException("evaluateEveryNEpochs must be >= 1, got " + everyNEpochs);
            }
            this.evaluateEveryNEpochs = everyNEpochs;
            return this;
        }

        /** How the network is scored after an epoch (required). */
        public Builder<T> scoreCalculator(ScoreCalculator<? super T> scoreCalculator) {
            this.scoreCalculator = Objects.requireNonNull(scoreCalculator, "scoreCalculator");
            return this;
        }

        public EarlyStoppingConfiguration<T> build() {
            if (scoreCalculator == null) {
                throw new IllegalStateException("EarlyStoppingConfiguration needs a scoreCalculator");
            }
            if (epochConditions.isEmpty() && iterationConditions.isEmpty()) {
                throw new IllegalStateException("EarlyStoppingConfiguration needs at least one epoch or iteration "
                        + "termination condition, or training would never end");
            }
            if (modelSaver == null) {
                modelSaver = new InMemoryModelSaver<>();
            }
            return new EarlyStoppingConfiguration<>(this);
        }
    }
}
