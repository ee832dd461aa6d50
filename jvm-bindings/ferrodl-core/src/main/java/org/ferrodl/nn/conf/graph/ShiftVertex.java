package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/** Adds a constant to its single input. */
public class ShiftVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private double shiftFactor;

    /** For deserialization. */
    protected ShiftVertex() {
    }

    /** @param shiftFactor the constant added */
    public ShiftVertex(double shiftFactor) {
        this.shiftFactor = shiftFactor;
    }

    /** @return the constant added */
    public double getShiftFactor() {
        return shiftFactor;
    }

    @Override
    public ShiftVertex clone() {
        return (ShiftVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShiftVertex && Double.compare(((ShiftVertex) o).shiftFactor, shiftFactor) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("ShiftVertex", shiftFactor);
    }

    @Override
    public String toString() {
        return "ShiftVertex(shiftFactor=" + shiftFactor + ")";
    }
}
