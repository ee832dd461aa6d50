package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/** Multiplies its single input by a constant. */
public class ScaleVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private double scaleFactor;

    /** For deserialization. */
    protected ScaleVertex() {
    }

    /** @param scaleFactor the constant factor */
    public ScaleVertex(double scaleFactor) {
        this.scaleFactor = scaleFactor;
    }

    /** @return the constant factor */
    public double getScaleFactor() {
        return scaleFactor;
    }

    @Override
    public ScaleVertex clone() {
        return (ScaleVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScaleVertex && Double.compare(((ScaleVertex) o).scaleFactor, scaleFactor) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("ScaleVertex", scaleFactor);
    }

    @Override
    public String toString() {
        return "ScaleVertex(scaleFactor=" + scaleFactor + ")";
    }
}
