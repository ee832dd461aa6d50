package org.ferrodl.linalg.learning.config;

import org.ferrodl.linalg.schedule.ISchedule;

/**
 * No updates: the update is zero, so the parameters it is applied to never change, whatever the
 * gradient and regularization. No state, no learning rate.
 *
 * <p>The reference's NoOp passes the gradient through unchanged and relies on its frozen layers
 * producing zero gradients; ferrodl makes the update itself zero, which is what NoOp is used for
 * (holding parameters constant). See docs/UPDATERS.md.
 *
 * <p>JSON: {@code {"type":"NoOp"}}.
 */
public class NoOp implements IUpdater {
    private static final long serialVersionUID = 1L;

    /** The no-op updater. */
    public NoOp() {
    }

    /** @return NaN: NoOp has no learning rate */
    @Override
    public double getLearningRate() {
        return Double.NaN;
    }

    /** @throws UnsupportedOperationException always: NoOp has no learning rate */
    @Override
    public void setLearningRate(double learningRate) {
        throw new UnsupportedOperationException("NoOp has no learning rate");
    }

    @Override
    public boolean hasLearningRate() {
        return false;
    }

    /** @throws UnsupportedOperationException always: NoOp has no learning rate */
    @Override
    public void setLrAndSchedule(double lr, ISchedule lrSchedule) {
        throw new UnsupportedOperationException("NoOp has no learning rate or learning-rate schedule");
    }

    @Override
    public int stateSizePerParam() {
        return 0;
    }

    @Override
    public NoOp clone() {
        return new NoOp();
    }

    @Override
    public String validate() {
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NoOp;
    }

    @Override
    public int hashCode() {
        return NoOp.class.getName().hashCode();
    }

    @Override
    public String toString() {
        return "NoOp()";
    }
}
