package org.ferrodl.nn.conf.preprocessor;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;
import org.ferrodl.nn.conf.InputPreProcessor;

/** The three sizes both CNN ↔ feed-forward preprocessors carry (height, width, channels). */
@JsonPropertyOrder({"inputHeight", "inputWidth", "numChannels"})
abstract class BaseCnnShapePreProcessor implements InputPreProcessor {
    private static final long serialVersionUID = 1L;

    protected long inputHeight;
    protected long inputWidth;
    protected long numChannels;

    BaseCnnShapePreProcessor(long inputHeight, long inputWidth, long numChannels) {
        this.inputHeight = inputHeight;
        this.inputWidth = inputWidth;
        this.numChannels = numChannels;
    }

    /** @return the height of the convolutional side */
    public long getInputHeight() {
        return inputHeight;
    }

    /** @param inputHeight the height of the convolutional side */
    public void setInputHeight(long inputHeight) {
        this.inputHeight = inputHeight;
    }

    /** @return the width of the convolutional side */
    public long getInputWidth() {
        return inputWidth;
    }

    /** @param inputWidth the width of the convolutional side */
    public void setInputWidth(long inputWidth) {
        this.inputWidth = inputWidth;
    }

    /** @return the number of channels of the convolutional side */
    public long getNumChannels() {
        return numChannels;
    }

    /** @param numChannels the number of channels of the convolutional side */
    public void setNumChannels(long numChannels) {
        this.numChannels = numChannels;
    }

    @Override
    public BaseCnnShapePreProcessor clone() {
        try {
            return (BaseCnnShapePreProcessor) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (o == null || o.getClass() != getClass()) {
            return false;
        }
        BaseCnnShapePreProcessor p = (BaseCnnShapePreProcessor) o;
        return inputHeight == p.inputHeight && inputWidth == p.inputWidth && numChannels == p.numChannels;
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass().getSimpleName(), inputHeight, inputWidth, numChannels);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(inputHeight=" + inputHeight + ", inputWidth=" + inputWidth
                + ", numChannels=" + numChannels + ")";
    }
}
