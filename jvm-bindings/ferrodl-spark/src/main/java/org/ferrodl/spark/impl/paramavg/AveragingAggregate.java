package org.ferrodl.spark.impl.paramavg;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.api.TrainingResult;

/**
 * Sum of worker results of one split, combined with {@code treeAggregate}: parameter and updater
 * sums (double, so the average does not depend on the order of addition beyond double rounding),
 * score sum and counts.
 */
public final class AveragingAggregate implements TrainingResult {
    private static final long serialVersionUID = 1L;

    double[] paramSum;
    double[] updaterSum;
    double scoreSum;
    int workers;
    int maxMinibatches;
    long minibatches;
    long examples;
    final List<WorkerStats> stats = new ArrayList<>();

    public static AveragingAggregate empty() {
        return new AveragingAggregate();
    }

    /** One worker's result. */
    static AveragingAggregate ofWorker(float[] params, float[] updaterState, double score, int minibatches,
                                       long examples, WorkerStats stats) {
        AveragingAggregate a = new AveragingAggregate();
        a.paramSum = toDouble(params);
        a.updaterSum = updaterState == null ? null : toDouble(updaterState);
        a.scoreSum = score;
        a.workers = 1;
        a.maxMinibatches = minibatches;
        a.minibatches = minibatches;
        a.examples = examples;
        if (stats != null) {
            a.stats.add(stats);
        }
        return a;
    }

    /** Adds {@code other} into this aggregate (reusing this object's arrays) and returns it. */
    public AveragingAggregate add(AveragingAggregate other) {
        if (other.workers == 0) {
            return this;
        }
        if (workers == 0) {
            return other;
        }
        paramSum = addInto(paramSum, other.paramSum, "parameters");
        updaterSum = updaterSum == null || other.updaterSum == null ? null
                : addInto(updaterSum, other.updaterSum, "updater state");
        scoreSum += other.scoreSum;
        workers += other.workers;
        maxMinibatches = Math.max(maxMinibatches, other.maxMinibatches);
        minibatches += other.minibatches;
        examples += other.examples;
        stats.addAll(other.stats);
        return this;
    }

    @Override
    public long getMinibatches() {
        return minibatches;
    }

    @Override
    public long getExamples() {
        return examples;
    }

    private static double[] addInto(double[] a, double[] b, String what) {
        if (a.length != b.length) {
            throw new IllegalStateException("workers returned " + what + " of different lengths: "
                    + a.length + " and " + b.length);
        }
        for (int i = 0; i < a.length; i++) {
            a[i] += b[i];
        }
        return a;
    }

    private static double[] toDouble(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        return d;
    }

    /** {@code sum / workers} as float. */
    static float[] mean(double[] sum, int workers) {
        float[] out = new float[sum.length];
        for (int i = 0; i < sum.length; i++) {
            out[i] = (float) (sum[i] / workers);
        }
        return out;
    }
}
