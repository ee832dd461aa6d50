package org.ferrodl.nn.conf.graph;

import java.util.Objects;

/**
 * Combines inputs of identical shape element by element: {@link Op#Add}, {@link Op#Subtract}
 * (exactly two inputs: first minus second), {@link Op#Product}, {@link Op#Average},
 * {@link Op#Max}.
 */
public class ElementWiseVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    /** The element-wise operation. */
    public enum Op {
        /** Sum of the inputs. */
        Add,
        /** First input minus the second (exactly two inputs). */
        Subtract,
        /** Product of the inputs. */
        Product,
        /** Mean of the inputs. */
        Average,
        /** Maximum of the inputs (the gradient goes to the largest). */
        Max
    }

    private Op op;

    /** For deserialization. */
    protected ElementWiseVertex() {
    }

    /** @param op the operation */
    public ElementWiseVertex(Op op) {
        this.op = Objects.requireNonNull(op, "op");
    }

    /** @return the operation */
    public Op getOp() {
        return op;
    }

    @Override
    public ElementWiseVertex clone() {
        return (ElementWiseVertex) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ElementWiseVertex && ((ElementWiseVertex) o).op == op;
    }

    @Override
    public int hashCode() {
        return Objects.hash("ElementWiseVertex", op);
    }

    @Override
    public String toString() {
        return "ElementWiseVertex(op=" + op + ")";
    }
}
