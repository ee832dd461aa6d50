package org.ferrodl.evaluation.curves;

/** Counts in {@code binCounts.length} equal bins over {@code [lower, upper]}. */
public record Histogram(String title, double lower, double upper, long[] binCounts) {
    public int numBins() {
        return binCounts.length;
    }

    /** Lower edge of bin {@code i}. */
    public double binLowerBound(int i) {
        return lower + (upper - lower) * i / binCounts.length;
    }
}
