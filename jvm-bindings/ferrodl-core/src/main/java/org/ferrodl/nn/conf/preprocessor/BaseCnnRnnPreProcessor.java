package org.ferrodl.nn.conf.preprocessor;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;
import org.ferrodl.nn.conf.RNNFormat;

/** The image sizes and the recurrent layout both CNN ↔ RNN preprocessors carry. */
@JsonPropertyOrder({"inputHeight", "inputWidth", "numChannels", "rnnDataFormat"})
abstract class BaseCnnRnnPreProcessor extends BaseCnnShapePreProcessor {
    private static final long serialVersionUID = 1L;

    protected RNNFormat rnnDataFormat;

    BaseCnnRnnPreProcessor(long inputHeight, long inputWidth, long numChannels, RNNFormat rnnDataFormat) {
        super(inputHeight, inputWidth, numChannels);
        this.rnnDataFormat = Objects.requireNonNull(rnnDataFormat, "rnnDataFormat");
    }

    /** @return the layout of the recurrent side (default NCW) */
    public RNNFormat getRnnDataFormat() {
        return rnnDataFormat;
    }

    /** @param rnnDataFormat the layout of the recurrent side */
    public void setRnnDataFormat(RNNFormat rnnDataFormat) {
        this.rnnDataFormat = rnnDataFormat;
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((BaseCnnRnnPreProcessor) o).rnnDataFormat == rnnDataFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), rnnDataFormat);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(inputHeight=" + inputHeight + ", inputWidth=" + inputWidth
                + ", numChannels=" + numChannels + ", rnnDataFormat=" + rnnDataFormat + ")";
    }
}
