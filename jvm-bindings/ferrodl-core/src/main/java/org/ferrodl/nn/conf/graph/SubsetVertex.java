package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/**
 * Keeps features (or channels, for convolutional activations) {@code from} to {@code to},
 * <b>inclusive</b>, of its single input, as the reference does.
 */
public class SubsetVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private int from;
    private int to;

    /** For deserialization. */
    protected SubsetVertex() {
    }

    /**
     * @param from first feature/channel kept (0-based)
     * @param to last feature/channel kept (inclusive)
     */
    public SubsetVertex(int from, int to) {
        this.from = from;
        this.to = to;
    }

    /** @return the first index kept */
    public int getFrom() {
        return from;
    }

    /** @return the last index kept (inclusive) */
    public int getTo() {
        return to;
    }

    @Override
    public SubsetVertex clone() {
        return (SubsetVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SubsetVertex)) {
            return false;
        }
        SubsetVertex v = (SubsetVertex) o;
        return from == v.from && to == v.to;
    }

    @Override
    public int hashCode() {
        return Objects.hash("SubsetVertex", from, to);
    }

    @Override
    public String toString() {
        return "SubsetVertex(from=" + from + ", to=" + to + ")";
    }
}
