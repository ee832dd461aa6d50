package org.ferrodl.nn.conf.preprocessor;

import org.ferrodl.nn.conf.RNNFormat;

/**
 * Turns recurrent activations {@code [minibatch, C·H·W, timeSteps]} into one image
 * {@code [C, H, W]} per (example, time step) (the reference's preprocessor of the same name). The
 * sizes describe the outgoing convolutional activations.
 */
public class RnnToCnnPreProcessor extends BaseCnnRnnPreProcessor {
    private static final long serialVersionUID = 1L;

    /**
     * @param inputHeight height of the convolutional activations
     * @param inputWidth width
     * @param numChannels channels
     * @param rnnDataFormat layout of the recurrent input
     */
    public RnnToCnnPreProcessor(long inputHeight, long inputWidth, long numChannels, RNNFormat rnnDataFormat) {
        super(inputHeight, inputWidth, numChannels, rnnDataFormat);
    }

    /**
     * NCW input.
     *
     * @param inputHeight height of the convolutional activations
     * @param inputWidth width
     * @param numChannels channels
     */
    public RnnToCnnPreProcessor(long inputHeight, long inputWidth, long numChannels) {
        this(inputHeight, inputWidth, numChannels, RNNFormat.NCW);
    }

    /** Sizes 0: for deserialization (the engine refuses zero sizes where it needs them). */
    public RnnToCnnPreProcessor() {
        this(0, 0, 0);
    }

    @Override
    public RnnToCnnPreProcessor clone() {
        return (RnnToCnnPreProcessor) super.clone();
    }
}
