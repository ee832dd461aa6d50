package org.ferrodl.nn.conf.distribution;

import java.util.Objects;

/** A uniform distribution on {@code [lower, upper)}. */
public class UniformDistribution extends Distribution {
    private static final long serialVersionUID = 1L;

    private double lower;
    private double upper;

    /** For deserialization. */
    protected UniformDistribution() {
    }

    /**
     * @param lower the lower bound
     * @param upper the upper bound (&gt; lower)
     */
    public UniformDistribution(double lower, double upper) {
        this.lower = lower;
        this.upper = upper;
    }

    /** @return the lower bound */
    public double getLower() {
        return lower;
    }

    /** @return the upper bound */
    public double getUpper() {
        return upper;
    }

    @Override
    public String validate() {
        return Double.isFinite(lower) && Double.isFinite(upper) && lower < upper ? null
                : "lower=" + lower + ", upper=" + upper + " is invalid (finite, lower < upper)";
    }

    @Override
    public UniformDistribution clone() {
        return (UniformDistribution) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof UniformDistribution)) {
            return false;
        }
        UniformDistribution d = (UniformDistribution) o;
        return Double.compare(lower, d.lower) == 0 && Double.compare(upper, d.upper) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("Uniform", lower, upper);
    }

    @Override
    public String toString() {
        return "UniformDistribution(lower=" + lower + ", upper=" + upper + ")";
    }
}
