package org.ferrodl.optimize.solvers.accumulation.encoding.residual;

import org.ferrodl.optimize.solvers.accumulation.encoding.ResidualPostProcessor;

/** Leaves the residual alone. */
public final class NoOpResidualPostProcessor implements ResidualPostProcessor {
    private static final long serialVersionUID = 1L;

    @Override
    public String toNativeJson() {
        return "{\"type\":\"noop\"}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NoOpResidualPostProcessor;
    }

    @Override
    public int hashCode() {
        return NoOpResidualPostProcessor.class.hashCode();
    }

    @Override
    public String toString() {
        return "NoOpResidualPostProcessor";
    }
}
