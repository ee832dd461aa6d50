package org.ferrodl.earlystopping.scorecalc;

import java.io.Serializable;
import org.ferrodl.nn.api.Model;

/** Computes the score an early-stopping run compares between epochs. */
public interface ScoreCalculator<T extends Model> extends Serializable {

    /** @return the score of {@code network} */
    double calculateScore(T network);

    /** @return true when lower scores are better (a loss), false when higher are (accuracy, AUC) */
    boolean minimizeScore();
}
