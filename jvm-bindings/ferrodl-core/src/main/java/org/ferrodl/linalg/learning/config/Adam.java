package org.ferrodl.linalg.learning.config;

import java.util.Objects;

/**
 * The Adam updater (Kingma and Ba, 2014). With {@code t = iteration + 1}:
 * {@code m = β1·m + (1-β1)·g}, {@code v = β2·v + (1-β2)·g²},
 * {@code α = lr·sqrt(1-β2^t)/(1-β1^t)}, {@code update = α·m/(sqrt(v)+ε)}.
 */
public class Adam implements IUpdater {
    private static final long serialVersionUID = 1L;

    /** Default learning rate, 1e-3. */
    public static final double DEFAULT_ADAM_LEARNING_RATE = 1e-3;
    /** Default β1, 0.9. */
    public static final double DEFAULT_ADAM_BETA1_MEAN_DECAY = 0.9;
    /** Default β2, 0.999. */
    public static final double DEFAULT_ADAM_BETA2_VAR_DECAY = 0.999;
    /** Default ε, 1e-8. */
    public static final double DEFAULT_ADAM_EPSILON = 1e-8;

    private double learningRate;
    private double beta1;
    private double beta2;
    private double epsilon;

    /** Adam with the default hyper-parameters (1e-3, 0.9, 0.999, 1e-8). */
    public Adam() {
        this(DEFAULT_ADAM_LEARNING_RATE);
    }

    /** @param learningRate the learning rate; the other hyper-parameters take their defaults */
    public Adam(double learningRate) {
        this(learningRate, DEFAULT_ADAM_BETA1_MEAN_DECAY, DEFAULT_ADAM_BETA2_VAR_DECAY, DEFAULT_ADAM_EPSILON);
    }

    /**
     * @param learningRate the learning rate
     * @param beta1 decay of the first moment
     * @param beta2 decay of the second moment
     * @param epsilon numerical stability term
     */
    public Adam(double learningRate, double beta1, double beta2, double epsilon) {
        this.learningRate = learningRate;
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.epsilon = epsilon;
    }

    @Override
    public double getLearningRate() {
        return learningRate;
    }

    @Override
    public void setLearningRate(double learningRate) {
        this.learningRate = learningRate;
    }

    /** @return β1 */
    public double getBeta1() {
        return beta1;
    }

    /** @param beta1 new β1 */
    public void setBeta1(double beta1) {
        this.beta1 = beta1;
    }

    /** @return β2 */
    public double getBeta2() {
        return beta2;
    }

    /** @param beta2 new β2 */
    public void setBeta2(double beta2) {
        this.beta2 = beta2;
    }

    /** @return ε */
    public double getEpsilon() {
        return epsilon;
    }

    /** @param epsilon new ε */
    public void setEpsilon(double epsilon) {
        this.epsilon = epsilon;
    }

    @Override
    public int stateSizePerParam() {
        return 2;
    }

    @Override
    public Adam clone() {
        return new Adam(learningRate, beta1, beta2, epsilon);
    }

    @Override
    public String validate() {
        return UpdaterChecks.firstProblem(UpdaterChecks.nonNegative("learningRate", learningRate),
                UpdaterChecks.inUnitInterval("beta1", beta1), UpdaterChecks.inUnitInterval("beta2", beta2),
                Double.isFinite(epsilon) && epsilon > 0 ? null : "epsilon must be finite and > 0, got " + epsilon);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Adam)) {
            return false;
        }
        Adam a = (Adam) o;
        return Double.compare(a.learningRate, learningRate) == 0 && Double.compare(a.beta1, beta1) == 0
                && Double.compare(a.beta2, beta2) == 0 && Double.compare(a.epsilon, epsilon) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("Adam", learningRate, beta1, beta2, epsilon);
    }

    @Override
    public String toString() {
        return "Adam(learningRate=" + learningRate + ", beta1=" + beta1 + ", beta2=" + beta2 + ", epsilon="
                + epsilon + ")";
    }
}
