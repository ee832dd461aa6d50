package org.ferrodl.nn.conf.preprocessor;

/**
 * Flattens convolutional activations {@code [C, H, W]} into feed-forward rows of {@code C·H·W}
 * values (C order), as the reference's preprocessor of the same name. The sizes describe the
 * incoming convolutional activations.
 */
public class CnnToFeedForwardPreProcessor extends BaseCnnShapePreProcessor {
    private static final long serialVersionUID = 1L;

    /**
     * @param inputHeight height of the incoming activations
     * @param inputWidth width
     * @param numChannels channels
     */
    public CnnToFeedForwardPreProcessor(long inputHeight, long inputWidth, long numChannels) {
        super(inputHeight, inputWidth, numChannels);
    }

    /**
     * One channel.
     *
     * @param inputHeight height of the incoming activations
     * @param inputWidth width
     */
    public CnnToFeedForwardPreProcessor(long inputHeight, long inputWidth) {
        this(inputHeight, inputWidth, 1);
    }

    /** Sizes 0: for deserialization (the engine refuses zero sizes where it needs them). */
    public CnnToFeedForwardPreProcessor() {
        this(0, 0, 0);
    }

    @Override
    public CnnToFeedForwardPreProcessor clone() {
        return (CnnToFeedForwardPreProcessor) super.clone();
    }
}
