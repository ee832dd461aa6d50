package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/**
 * Wraps a vertex whose parameters must not change during training (transfer learning): a wrapped
 * layer is not updated and runs in inference mode (no dropout).
 */
public class FrozenVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private GraphVertex vertex;

    /** For deserialization. */
    protected FrozenVertex() {
    }

    /** @param underlying the vertex to freeze */
    public FrozenVertex(GraphVertex underlying) {
        this.vertex = Objects.requireNonNull(underlying, "underlying");
    }

    /** @return the wrapped vertex */
    public GraphVertex getUnderlying() {
        return vertex;
    }

    @Override
    public FrozenVertex clone() {
        FrozenVertex v = (FrozenVertex) super.clone();
        v.vertex = vertex == null ? null : vertex.clone();
        return v;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FrozenVertex && Objects.equals(((FrozenVertex) o).vertex, vertex);
    }

    @Override
    public int hashCode() {
        return Objects.hash("FrozenVertex", vertex);
    }

    @Override
    public String toString() {
        return "FrozenVertex(" + vertex + ")";
    }
}
