package org.ferrodl.nn.conf.graph;

/**
 * Concatenates its inputs along the feature axis (feed-forward) or the channel axis
 * (convolutional); every other dimension must agree. Takes one or more inputs.
 */
public class MergeVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    /** A merge vertex (no settings). */
    public MergeVertex() {
    }

    @Override
    public MergeVertex clone() {
        return (MergeVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MergeVertex;
    }

    @Override
    public int hashCode() {
        return MergeVertex.class.getSimpleName().hashCode();
    }

    @Override
    public String toString() {
        return "MergeVertex()";
    }
}
