package org.ferrodl.nn.conf.graph;

import java.util.Arrays;
import java.util.Objects;

/**
 * Divides each example of its single input by its L2 norm over {@code dimension} (an empty array,
 * the default, means every non-minibatch axis); {@code eps} keeps the division finite.
 */
public class L2NormalizeVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    /** The reference's default epsilon. */
    public static final double DEFAULT_EPS = 1e-8;

    private int[] dimension = new int[0];
    private double eps = DEFAULT_EPS;

    /** Over every non-minibatch axis, {@code eps = 1e-8}. */
    public L2NormalizeVertex() {
    }

    /**
     * @param dimension axes of the norm (empty or null: every non-minibatch axis)
     * @param eps small constant that keeps the division finite
     */
    public L2NormalizeVertex(int[] dimension, double eps) {
        this.dimension = dimension == null ? new int[0] : dimension.clone();
        this.eps = eps;
    }

    /** @return the axes of the norm (a copy; empty = every non-minibatch axis) */
    public int[] getDimension() {
        return dimension.clone();
    }

    /** @return the epsilon */
    public double getEps() {
        return eps;
    }

    @Override
    public L2NormalizeVertex clone() {
        L2NormalizeVertex v = (L2NormalizeVertex) super.clone();
        v.dimension = dimension.clone();
        return v;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof L2NormalizeVertex)) {
            return false;
        }
        L2NormalizeVertex v = (L2NormalizeVertex) o;
        return Arrays.equals(dimension, v.dimension) && Double.compare(eps, v.eps) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("L2NormalizeVertex", Arrays.hashCode(dimension), eps);
    }

    @Override
    public String toString() {
        return "L2NormalizeVertex(dimension=" + Arrays.toString(dimension) + ", eps=" + eps + ")";
    }
}
