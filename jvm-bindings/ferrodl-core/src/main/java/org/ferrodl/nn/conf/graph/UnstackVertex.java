package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/**
 * The inverse of {@link StackVertex}: its input holds {@code stackSize} stacked parts along the
 * minibatch axis, and this vertex outputs part {@code from} (0-based).
 */
public class UnstackVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private int from;
    private int stackSize;

    /** For deserialization. */
    protected UnstackVertex() {
    }

    /**
     * @param from which part to output (0-based)
     * @param stackSize how many parts were stacked
     */
    public UnstackVertex(int from, int stackSize) {
        this.from = from;
        this.stackSize = stackSize;
    }

    /** @return the part output */
    public int getFrom() {
        return from;
    }

    /** @return the number of stacked parts */
    public int getStackSize() {
        return stackSize;
    }

    @Override
    public UnstackVertex clone() {
        return (UnstackVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof UnstackVertex)) {
            return false;
        }
        UnstackVertex v = (UnstackVertex) o;
        return from == v.from && stackSize == v.stackSize;
    }

    @Override
    public int hashCode() {
        return Objects.hash("UnstackVertex", from, stackSize);
    }

    @Override
    public String toString() {
        return "UnstackVertex(from=" + from + ", stackSize=" + stackSize + ")";
    }
}
