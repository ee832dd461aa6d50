package org.ferrodl.earlystopping.listener;

import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.EarlyStoppingResult;
import org.ferrodl.nn.api.Model;

/** Called by an early-stopping trainer at the start, after every epoch and at the end. */
public interface EarlyStoppingListener<T extends Model> {

    void onStart(EarlyStoppingConfiguration<T> esConfig, T net);

    /** @param score the epoch's score, NaN when it was not scored */
    void onEpoch(int epochNum, double score, EarlyStoppingConfiguration<T> esConfig, T net);

    void onCompletion(EarlyStoppingResult<T> esResult);
}
