package org.ferrodl.nn.conf.graph;

/**
 * Stacks its inputs along the minibatch axis: n inputs of {@code m} examples become one activation
 * of {@code n·m} rows (inputs must have the same shape). Undo it with {@link UnstackVertex}; a
 * network output must have one row per example again.
 */
public class StackVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    /** A stack vertex (no settings). */
    public StackVertex() {
    }

    @Override
    public StackVertex clone() {
        return (StackVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StackVertex;
    }

    @Override
    public int hashCode() {
        return StackVertex.class.getSimpleName().hashCode();
    }

    @Override
    public String toString() {
        return "StackVertex()";
    }
}
