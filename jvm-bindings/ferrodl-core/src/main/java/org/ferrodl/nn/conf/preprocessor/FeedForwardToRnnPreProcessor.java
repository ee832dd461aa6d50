package org.ferrodl.nn.conf.preprocessor;

import org.ferrodl.nn.conf.RNNFormat;

/**
 * Turns feed-forward rows, one per (example, time step), back into recurrent activations
 * {@code [minibatch, size, timeSteps]} (the reference's preprocessor of the same name). The engine
 * inserts it by itself between a feed-forward layer and a following recurrent layer when none is
 * given.
 */
public class FeedForwardToRnnPreProcessor extends BaseRnnPreProcessor {
    private static final long serialVersionUID = 1L;

    /** NCW output. */
    public FeedForwardToRnnPreProcessor() {
        this(RNNFormat.NCW);
    }

    /** @param rnnDataFormat layout of the recurrent output */
    public FeedForwardToRnnPreProcessor(RNNFormat rnnDataFormat) {
        super(rnnDataFormat);
    }

    @Override
    public FeedForwardToRnnPreProcessor clone() {
        return (FeedForwardToRnnPreProcessor) super.clone();
    }
}
