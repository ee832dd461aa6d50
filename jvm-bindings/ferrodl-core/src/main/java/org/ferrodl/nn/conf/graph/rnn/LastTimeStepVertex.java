package org.ferrodl.nn.conf.graph.rnn;

import java.util.Objects;
import org.ferrodl.nn.conf.graph.GraphVertex;

/**
 * Takes the activations of its single recurrent input at the last time step, as a feed-forward
 * {@code [minibatch, size]} output (the reference's {@code LastTimeStepVertex}). With
 * {@code maskArrayInputName} set, the last step of each example is its last unmasked step according
 * to that network input's features mask; without it (null), the last step of the sequence.
 *
 * <p>JSON: {@code {"type":"LastTimeStepVertex","maskArrayInputName":"in"}}.
 */
public class LastTimeStepVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private String maskArrayInputName;

    /** For deserialization. */
    protected LastTimeStepVertex() {
    }

    /**
     * @param maskArrayInputName the network input whose features mask says which step is each
     *     example's last, or null to use the last step of the sequence
     */
    public LastTimeStepVertex(String maskArrayInputName) {
        this.maskArrayInputName = maskArrayInputName;
    }

    /** @return the network input whose mask is used, or null */
    public String getMaskArrayInputName() {
        return maskArrayInputName;
    }

    @Override
    public LastTimeStepVertex clone() {
        return (LastTimeStepVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LastTimeStepVertex
                && Objects.equals(((LastTimeStepVertex) o).maskArrayInputName, maskArrayInputName);
    }

    @Override
    public int hashCode() {
        return Objects.hash("LastTimeStepVertex", maskArrayInputName);
    }

    @Override
    public String toString() {
        return "LastTimeStepVertex(maskArrayInputName=" + maskArrayInputName + ")";
    }
}
