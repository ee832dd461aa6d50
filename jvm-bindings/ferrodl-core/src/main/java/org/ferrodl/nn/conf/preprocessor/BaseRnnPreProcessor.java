package org.ferrodl.nn.conf.preprocessor;

import java.util.Objects;
import org.ferrodl.nn.conf.InputPreProcessor;
import org.ferrodl.nn.conf.RNNFormat;

/** The layout setting both recurrent ↔ feed-forward preprocessors carry. */
abstract class BaseRnnPreProcessor implements InputPreProcessor {
    private static final long serialVersionUID = 1L;

    protected RNNFormat rnnDataFormat;

    BaseRnnPreProcessor(RNNFormat rnnDataFormat) {
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
    public BaseRnnPreProcessor clone() {
        try {
            return (BaseRnnPreProcessor) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && ((BaseRnnPreProcessor) o).rnnDataFormat == rnnDataFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass().getSimpleName(), rnnDataFormat);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(rnnDataFormat=" + rnnDataFormat + ")";
    }
}
