package org.ferrodl.nn.conf.preprocessor;

import org.ferrodl.nn.conf.RNNFormat;

/**
 * Turns recurrent activations {@code [minibatch, size, timeSteps]} into feed-forward rows, one per
 * (example, time step), so a feed-forward layer applies at every step (the reference's
 * preprocessor of the same name). The engine inserts it by itself between a recurrent layer and a
 * following feed-forward layer when none is given.
 */
public class RnnToFeedForwardPreProcessor extends BaseRnnPreProcessor {
    private static final long serialVersionUID = 1L;

    /** NCW input. */
    public RnnToFeedForwardPreProcessor() {
        this(RNNFormat.NCW);
    }

    /** @param rnnDataFormat layout of the recurrent input */
    public RnnToFeedForwardPreProcessor(RNNFormat rnnDataFormat) {
        super(rnnDataFormat);
    }

    @Override
    public RnnToFeedForwardPreProcessor clone() {
        return (RnnToFeedForwardPreProcessor) super.clone();
    }
}
