package org.ferrodl.nn.conf.distribution;

import java.util.Objects;

/** A normal (Gaussian) distribution. */
public class NormalDistribution extends Distribution {
    private static final long serialVersionUID = 1L;

    private double mean;
    private double std;

    /** For deserialization. */
    protected NormalDistribution() {
    }

    /**
     * @param mean the mean
     * @param std the standard deviation (&gt; 0)
     */
    public NormalDistribution(double mean, double std) {
        this.mean = mean;
        this.std = std;
    }

    /** @return the mean */
    public double getMean() {
        return mean;
    }

    /** @return the standard deviation */
    public double getStd() {
        return std;
    }

    @Override
    public String validate() {
        return Double.isFinite(mean) && Double.isFinite(std) && std > 0 ? null
                : "mean=" + mean + ", std=" + std + " is invalid (finite mean, std > 0)";
    }

    @Override
    public NormalDistribution clone() {
        return (NormalDistribution) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof NormalDistribution) || o.getClass() != getClass()) {
            return false;
        }
        NormalDistribution d = (NormalDistribution) o;
        return Double.compare(mean, d.mean) == 0 && Double.compare(std, d.std) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("Normal", mean, std);
    }

    @Override
    public String toString() {
        return "NormalDistribution(mean=" + mean + ", std=" + std + ")";
    }
}
