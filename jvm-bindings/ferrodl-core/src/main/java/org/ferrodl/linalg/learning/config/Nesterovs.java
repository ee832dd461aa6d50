package org.ferrodl.linalg.learning.config;

import java.util.Objects;

/**
 * SGD with Nesterov momentum: {@code vPrev = v; v = μ·v - lr·g; update = μ·vPrev - (1+μ)·v}.
 */
public class Nesterovs implements IUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 0.1. */
    public static final double DEFAULT_NESTEROV_LEARNING_RATE = 0.1;
    /** Default momentum, 0.9. */
    public static final double DEFAULT_NESTEROV_MOMENTUM = 0.9;

    private double learningRate;
    private double momentum;

    /** Nesterovs with learning rate 0.1 and momentum 0.9. */
    public Nesterovs() {
        this(DEFAULT_NESTEROV_LEARNING_RATE, DEFAULT_NESTEROV_MOMENTUM);
    }

    /** @param momentum the momentum; learning rate 0.1 */
    public Nesterovs(double momentum) {
        this(DEFAULT_NESTEROV_LEARNING_RATE, momentum);
    }

    /**
     * @param learningRate the learning rate
     * @param momentum the momentum μ
     */
    public Nesterovs(double learningRate, double momentum) {
        this.learningRate = learningRate;
        this.momentum = momentum;
    }

    @Override
    public double getLearningRate() {
        return learningRate;
    }

    @Override
    public void setLearningRate(double learningRate) {
        this.learningRate = learningRate;
    }

    /** @return the momentum */
    public double getMomentum() {
        return momentum;
    }

    /** @param momentum the new momentum */
    public void setMomentum(double momentum) {
        this.momentum = momentum;
    }

    @Override
    public int stateSizePerParam() {
        return 1;
    }

    @Override
    public Nesterovs clone() {
        return new Nesterovs(learningRate, momentum);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(UpdaterChecks.nonNegative("learningRate", learningRate),
                UpdaterChecks.inUnitInterval("momentum", momentum));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Nesterovs)) {
            return false;
        }
        Nesterovs n = (Nesterovs) o;
        return Double.compare(n.learningRate, learningRate) == 0 && Double.compare(n.momentum, momentum) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("Nesterovs", learningRate, momentum);
    }

    @Override
    public String toString() {
        return "Nesterovs(learningRate=" + learningRate + ", momentum=" + momentum + ")";
    }
}
