package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/**
 * The Euclidean distance between its two inputs, per example: output one column
 * {@code sqrt(sum((a - b)^2))}; {@code eps} keeps the gradient finite at distance 0.
 */
public class L2Vertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    /** The reference's default epsilon. */
    public static final double DEFAULT_EPS = 1e-8;

    private double eps = DEFAULT_EPS;

    /** With {@code eps = 1e-8}. */
    public L2Vertex() {
    }

    /** @param eps small constant that keeps the gradient finite at distance 0 */
    public L2Vertex(double eps) {
        this.eps = eps;
    }

    /** @return the epsilon */
    public double getEps() {
        return eps;
    }

    @Override
    public L2Vertex clone() {
        return (L2Vertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof L2Vertex && Double.compare(((L2Vertex) o).eps, eps) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("L2Vertex", eps);
    }

    @Override
    public String toString() {
        return "L2Vertex(eps=" + eps + ")";
    }
}
