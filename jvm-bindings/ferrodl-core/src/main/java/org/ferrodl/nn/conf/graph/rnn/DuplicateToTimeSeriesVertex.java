package org.ferrodl.nn.conf.graph.rnn;

import java.util.Objects;
import org.ferrodl.nn.conf.graph.GraphVertex;

/**
 * Repeats its single feed-forward input {@code [minibatch, size]} at every time step, giving
 * {@code [minibatch, size, timeSteps]}, where the number of steps is that of the network input
 * {@code inputName} in the same call (the reference's {@code DuplicateToTimeSeriesVertex}: e.g. a
 * sequence-level feature fed to every step of a recurrent layer).
 *
 * <p>JSON: {@code {"type":"DuplicateToTimeSeriesVertex","inputName":"in"}}.
 */
public class DuplicateToTimeSeriesVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private String inputName;

    /** For deserialization. */
    protected DuplicateToTimeSeriesVertex() {
    }

    /** @param inputName the network input (a time series) whose length is used */
    public DuplicateToTimeSeriesVertex(String inputName) {
        this.inputName = inputName;
    }

    /** @return the network input whose length is used */
    public String getInputName() {
        return inputName;
    }

    @Override
    public DuplicateToTimeSeriesVertex clone() {
        return (DuplicateToTimeSeriesVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DuplicateToTimeSeriesVertex
                && Objects.equals(((DuplicateToTimeSeriesVertex) o).inputName, inputName);
    }

    @Override
    public int hashCode() {
        return Objects.hash("DuplicateToTimeSeriesVertex", inputName);
    }

    @Override
    public String toString() {
        return "DuplicateToTimeSeriesVertex(inputName=" + inputName + ")";
    }
}
