package org.ferrodl.nn.conf.preprocessor;

import org.ferrodl.nn.conf.RNNFormat;

/**
 * Turns convolutional activations of one image per (example, time step) into recurrent activations
 * {@code [minibatch, C·H·W, timeSteps]} (the reference's preprocessor of the same name: e.g. a CNN
 * over video frames feeding an LSTM). The sizes describe the incoming convolutional activations.
 * The engine inserts it by itself between a convolutional and a recurrent layer when none is given.
 */
public class CnnToRnnPreProcessor extends BaseCnnRnnPreProcessor {
    private static final long serialVersionUID = 1L;

    /**
     * @param inputHeight height of the incoming activations
     * @param inputWidth width
     * @param numChannels channels
     * @param rnnDataFormat layout of the recurrent output
     */
    public CnnToRnnPreProcessor(long inputHeight, long inputWidth, long numChannels, RNNFormat rnnDataFormat) {
        super(inputHeight, inputWidth, numChannels, rnnDataFormat);
    }

    /**
     * NCW output.
     *
     * @param inputHeight height of the incoming activations
     * @param inputWidth width
     * @param numChannels channels
     */
    public CnnToRnnPreProcessor(long inputHeight, long inputWidth, long numChannels) {
        this(inputHeight, inputWidth, numChannels, RNNFormat.NCW);
    }

    /** Sizes 0: for deserialization (the engine refuses zero sizes where it needs them). */
    public CnnToRnnPreProcessor() {
        this(0, 0, 0);
    }

    @Override
    public CnnToRnnPreProcessor clone() {
        return (CnnToRnnPreProcessor) super.clone();
    }
}
