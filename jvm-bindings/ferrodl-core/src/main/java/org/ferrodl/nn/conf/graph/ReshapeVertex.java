package org.ferrodl.nn.conf.graph;

import java.util.Arrays;
import java.util.Objects;

/**
 * Reshapes its single input to {@code newShape}, which includes the minibatch axis ({@code -1}
 * there, or anywhere once, stands for "whatever is left"), reading values in {@code order}
 * ({@code 'c'}, the default: row-major). {@code maskShape} reshapes a mask the same way (null:
 * none).
 */
public class ReshapeVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private char order = 'c';
    private long[] newShape;
    private long[] maskShape;

    /** For deserialization. */
    protected ReshapeVertex() {
    }

    /** @param newShape the new shape, including the minibatch axis, e.g. {@code -1, 784} */
    public ReshapeVertex(long... newShape) {
        this('c', newShape, null);
    }

    /** @param newShape the new shape, including the minibatch axis */
    public ReshapeVertex(int... newShape) {
        this('c', Arrays.stream(newShape).asLongStream().toArray(), null);
    }

    /**
     * @param order {@code 'c'} (row-major) or {@code 'f'} (column-major)
     * @param newShape the new shape, including the minibatch axis
     * @param maskShape the new shape of a mask, or null
     */
    public ReshapeVertex(char order, long[] newShape, long[] maskShape) {
        this.order = order;
        this.newShape = Objects.requireNonNull(newShape, "newShape").clone();
        this.maskShape = maskShape == null ? null : maskShape.clone();
    }

    /** @return the value order, {@code 'c'} or {@code 'f'} */
    public char getOrder() {
        return order;
    }

    /** @return the new shape (a copy) */
    public long[] getNewShape() {
        return newShape.clone();
    }

    /** @return the mask's new shape (a copy), or null */
    public long[] getMaskShape() {
        return maskShape == null ? null : maskShape.clone();
    }

    @Override
    public ReshapeVertex clone() {
        ReshapeVertex v = (ReshapeVertex) super.clone();
        v.newShape = newShape == null ? null : newShape.clone();
        v.maskShape = maskShape == null ? null : maskShape.clone();
        return v;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ReshapeVertex)) {
            return false;
        }
        ReshapeVertex v = (ReshapeVertex) o;
        return order == v.order && Arrays.equals(newShape, v.newShape) && Arrays.equals(maskShape, v.maskShape);
    }

    @Override
    public int hashCode() {
        return Objects.hash("ReshapeVertex", order, Arrays.hashCode(newShape), Arrays.hashCode(maskShape));
    }

    @Override
    public String toString() {
        return "ReshapeVertex(order=" + order + ", newShape=" + Arrays.toString(newShape) + ", maskShape="
                + Arrays.toString(maskShape) + ")";
    }
}
