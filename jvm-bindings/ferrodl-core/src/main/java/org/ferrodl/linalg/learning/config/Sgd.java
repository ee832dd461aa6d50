package org.ferrodl.linalg.learning.config;

import java.util.Objects;

/**
 * Plain stochastic gradient descent: {@code update = learningRate · gradient}.
 */
public class Sgd implements IUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_SGD_LR = 1e-3;

    private double learningRate;

    /** SGD with learning rate {@value #DEFAULT_SGD_LR}. */
    public Sgd() {
        this(DEFAULT_SGD_LR);
    }

    /** @param learningRate the learning rate */
    public Sgd(double learningRate) {
        this.learningRate = learningRate;
    }

    @Override
    public double getLearningRate() {
        return learningRate;
    }

    @Override
    public void setLearningRate(double learningRate) {
        this.learningRate = learningRate;
    }

    @Override
    public int stateSizePerParam() {
        return 0;
    }

    @Override
    public Sgd clone() {
        return new Sgd(learningRate);
    }

    @Override
    public String validate() {
        return UpdaterChecks.nonNegative("learningRate", learningRate);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Sgd && Double.compare(((Sgd) o).learningRate, learningRate) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("Sgd", learningRate);
    }

    @Override
    public String toString() {
        return "Sgd(learningRate=" + learningRate + ")";
    }
}
