package org.ferrodl.linalg.learning.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.ferrodl.linalg.schedule.ISchedule;

/**
 * The learning-rate part shared by the updaters that have one: a fixed {@code learningRate} and an
 * optional {@code learningRateSchedule} that, when set, takes precedence. In JSON the schedule is
 * left out when it is null, so configurations without schedules keep their earlier form.
 */
abstract class BaseLearningRateUpdater implements IUpdater {
    private static final long serialVersionUID = 1L;

    private double learningRate;
    @JsonInclude(JsonInclude.Include.NON_NULL)
    private ISchedule learningRateSchedule;

    BaseLearningRateUpdater(double learningRate, ISchedule learningRateSchedule) {
        this.learningRate = learningRate;
        this.learningRateSchedule = learningRateSchedule;
    }

    /** @return the fixed learning rate (used when no schedule is set) */
    @Override
    public double getLearningRate() {
        return learningRate;
    }

    /**
     * Sets the fixed learning rate; a schedule, when set, still takes precedence (use
     * {@link #setLrAndSchedule(double, ISchedule)} to replace both).
     *
     * @param learningRate the new fixed learning rate
     */
    @Override
    public void setLearningRate(double learningRate) {
        this.learningRate = learningRate;
    }

    @Override
    public ISchedule getLearningRateSchedule() {
        return learningRateSchedule;
    }

    /** @param learningRateSchedule the schedule, or null for the fixed learning rate */
    public void setLearningRateSchedule(ISchedule learningRateSchedule) {
        this.learningRateSchedule = learningRateSchedule;
    }

    @Override
    public void setLrAndSchedule(double lr, ISchedule lrSchedule) {
        this.learningRate = lr;
        this.learningRateSchedule = lrSchedule;
    }

    @Override
    public abstract BaseLearningRateUpdater clone();

    /** @return the schedule cloned, or null */
    ISchedule scheduleCopy() {
        return learningRateSchedule == null ? null : learningRateSchedule.clone();
    }

    String learningRateProblem() {
        return UpdaterChecks.nonNegative("learningRate", learningRate);
    }

    boolean sameLearningRate(BaseLearningRateUpdater o) {
        return Double.compare(learningRate, o.learningRate) == 0
                && java.util.Objects.equals(learningRateSchedule, o.learningRateSchedule);
    }

    String learningRateString() {
        return "learningRate=" + learningRate
                + (learningRateSchedule == null ? "" : ", learningRateSchedule=" + learningRateSchedule);
    }
}
