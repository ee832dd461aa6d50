package org.ferrodl.nn.conf.graph;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.nn.conf.graph.rnn.DuplicateToTimeSeriesVertex;
import org.ferrodl.nn.conf.graph.rnn.LastTimeStepVertex;

/**
 * The configuration of one vertex of a {@link org.ferrodl.nn.conf.ComputationGraphConfiguration}:
 * a layer ({@link LayerVertex}) or an operation on its inputs' activations (merge, element-wise,
 * subset, stack, ...), with the reference's names, constructors and defaults.
 *
 * <p>A vertex is a configuration only: its shape rule (what inputs it accepts, what it outputs) is
 * defined once, in the engine, which checks the whole graph at {@code build()}. Serialized with a
 * {@code "type"} property naming the class (docs/ARCHITECTURE.md §2.4). Mutable, not thread-safe.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = LayerVertex.class, name = "LayerVertex"),
    @JsonSubTypes.Type(value = MergeVertex.class, name = "MergeVertex"),
    @JsonSubTypes.Type(value = ElementWiseVertex.class, name = "ElementWiseVertex"),
    @JsonSubTypes.Type(value = SubsetVertex.class, name = "SubsetVertex"),
    @JsonSubTypes.Type(value = StackVertex.class, name = "StackVertex"),
    @JsonSubTypes.Type(value = UnstackVertex.class, name = "UnstackVertex"),
    @JsonSubTypes.Type(value = ScaleVertex.class, name = "ScaleVertex"),
    @JsonSubTypes.Type(value = ShiftVertex.class, name = "ShiftVertex"),
    @JsonSubTypes.Type(value = L2Vertex.class, name = "L2Vertex"),
    @JsonSubTypes.Type(value = L2NormalizeVertex.class, name = "L2NormalizeVertex"),
    @JsonSubTypes.Type(value = PreprocessorVertex.class, name = "PreprocessorVertex"),
    @JsonSubTypes.Type(value = ReshapeVertex.class, name = "ReshapeVertex"),
    @JsonSubTypes.Type(value = FrozenVertex.class, name = "FrozenVertex"),
    @JsonSubTypes.Type(value = LastTimeStepVertex.class, name = "LastTimeStepVertex"),
    @JsonSubTypes.Type(value = DuplicateToTimeSeriesVertex.class, name = "DuplicateToTimeSeriesVertex")
})
public abstract class GraphVertex implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** @return a deep copy */
    @Override
    public GraphVertex clone() {
        try {
            return (GraphVertex) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    /** Value equality: same class and same settings. */
    @Override
    public abstract boolean equals(Object o);

    @Override
    public abstract int hashCode();
}
