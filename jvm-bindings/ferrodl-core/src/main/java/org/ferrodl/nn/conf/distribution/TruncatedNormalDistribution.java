package org.ferrodl.nn.conf.distribution;

import java.util.Objects;

/** A normal distribution truncated at two standard deviations from the mean (values beyond are redrawn). */
public class TruncatedNormalDistribution extends Distribution {
    private static final long serialVersionUID = 1L;

    private double mean;
    private double std;

    /** For deserialization. */
    protected TruncatedNormalDistribution() {
    }

    /**
     * @param mean the mean
     * @param std the standard deviation (&gt; 0)
     */
    public TruncatedNormalDistribution(double mean, double std) {
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
    public TruncatedNormalDistribution clone() {
        return (TruncatedNormalDistribution) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TruncatedNormalDistribution) || o.getClass() != getClass()) {
            return false;
        }
        TruncatedNormalDistribution d = (TruncatedNormalDistribution) o;
        return Double.compare(mean, d.mean) == 0 && Double.compare(std, d.std) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("TruncatedNormal", mean, std);
    }

    @Override
    public String toString() {
        return "TruncatedNormalDistribution(mean=" + mean + ", std=" + std + ")";
    }
}
