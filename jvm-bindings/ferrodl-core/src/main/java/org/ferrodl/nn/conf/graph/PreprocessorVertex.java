package org.ferrodl.nn.conf.graph;

import java.util.Objects;
import org.ferrodl.nn.conf.InputPreProcessor;

/** Applies an {@link InputPreProcessor} to its single input, as a vertex of its own. */
public class PreprocessorVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private InputPreProcessor preProcessor;

    /** For deserialization. */
    protected PreprocessorVertex() {
    }

    /** @param preProcessor the preprocessor */
    public PreprocessorVertex(InputPreProcessor preProcessor) {
        this.preProcessor = Objects.requireNonNull(preProcessor, "preProcessor");
    }

    /** @return the preprocessor */
    public InputPreProcessor getPreProcessor() {
        return preProcessor;
    }

    @Override
    public PreprocessorVertex clone() {
        PreprocessorVertex v = (PreprocessorVertex) super.clone();
        v.preProcessor = preProcessor == null ? null : preProcessor.clone();
        return v;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PreprocessorVertex && Objects.equals(((PreprocessorVertex) o).preProcessor, preProcessor);
    }

    @Override
    public int hashCode() {
        return Objects.hash("PreprocessorVertex", preProcessor);
    }

    @Override
    public String toString() {
        return "PreprocessorVertex(" + preProcessor + ")";
    }
}
