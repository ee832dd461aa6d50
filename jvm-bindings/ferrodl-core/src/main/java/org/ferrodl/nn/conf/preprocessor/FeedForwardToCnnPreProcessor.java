package org.ferrodl.nn.conf.preprocessor;

/**
 * Reads feed-forward rows of {@code C·H·W} values as convolutional activations {@code [C, H, W]}
 * (C order), as the reference's preprocessor of the same name. The sizes describe the outgoing
 * convolutional activations.
 */
public class FeedForwardToCnnPreProcessor extends BaseCnnShapePreProcessor {
    private static final long serialVersionUID = 1L;

    /**
     * @param inputHeight height of the convolutional activations
     * @param inputWidth width
     * @param numChannels channels
     */
    public FeedForwardToCnnPreProcessor(long inputHeight, long inputWidth, long numChannels) {
        super(inputHeight, inputWidth, numChannels);
    }

    /**
     * One channel.
     *
     * @param inputHeight height of the convolutional activations
     * @param inputWidth width
     */
    public FeedForwardToCnnPreProcessor(long inputHeight, long inputWidth) {
        this(inputHeight, inputWidth, 1);
    }

    /** Sizes 0: for deserialization (the engine refuses zero sizes where it needs them). */
    public FeedForwardToCnnPreProcessor() {
        this(0, 0, 0);
    }

    @Override
    public FeedForwardToCnnPreProcessor clone() {
        return (FeedForwardToCnnPreProcessor) super.clone();
    }
}
