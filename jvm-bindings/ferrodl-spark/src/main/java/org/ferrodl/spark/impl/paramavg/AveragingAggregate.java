package org.ferrodl.spark.impl.paramavg;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.api.TrainingResult;

/**
 * Sum of worker results of one split, combined with {@code treeAggregate}: parameter and updater
 * sums (double, so the average does not depend on the order of addition beyond double rounding),
 * score sum and counts. A single worker's result keeps its float arrays until it is added to
 * another: it is what travels from the executor to the driver, and float is half the bytes of
 * double (5.3 MB instead of 10.6 MB per worker and split for the MNIST MLP with Adam).
 */
public final class AveragingAggregate implements TrainingResult {
    private static final long serialVersionUID = 1L;

    /** One worker's own result (null once summed into the double arrays below). */
    float[] params;
    float[] updater;
    double[] paramSum;
    double[] updaterSum;
    double scoreSum;
    int workers;
    int maxMinibatches;
    /** The most training iterations one worker made (more than its minibatches under truncated BPTT). */
    int maxIterations;
    long minibatches;
    long examples;
    final List<WorkerStats> stats = new ArrayList<>();

    public static AveragingAggregate empty() {
        return new AveragingAggregate();
    }

    /** One worker's result. */
    static AveragingAggregate ofWorker(float[] params, float[] updaterState, double score, int minibatches,
                                       int iterations, long examples, WorkerStats stats) {
        AveragingAggregate a = new AveragingAggregate();
        a.params = params;
        a.updater = updaterState;
        a.scoreSum = score;
        a.workers = 1;
        a.maxMinibatches = minibatches;
        a.maxIterations = iterations;
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
        toSums();
        paramSum = addInto(paramSum, other.params != null ? null : other.paramSum, other.params, "parameters");
        boolean bothUpdaters = updaterSum != null && (other.updater != null || other.updaterSum != null);
        updaterSum = bothUpdaters ? addInto(updaterSum, other.updaterSum, other.updater, "updater state") : null;
        scoreSum += other.scoreSum;
        workers += other.workers;
        maxMinibatches = Math.max(maxMinibatches, other.maxMinibatches);
        maxIterations = Math.max(maxIterations, other.maxIterations);
        minibatches += other.minibatches;
        examples += other.examples;
        stats.addAll(other.stats);
        return this;
    }

    /** @return how many workers' results this holds (0 for a task without data) */
    public int getWorkers() {
        return workers;
    }

    /** @return the mean of the workers' parameters as a row vector, or null when no worker trained */
    public INDArray getParameters() {
        return workers == 0 ? null : row(mean(paramSum(), workers));
    }

    /**
     * @return the mean of the workers' updater states as a row vector, or null when no worker
     *     trained or not every one returned its state ({@code saveUpdater(false)})
     */
    public INDArray getUpdaterState() {
        double[] sum = workers == 0 ? null : updaterSum();
        return sum == null ? null : row(mean(sum, workers));
    }

    /** @return the mean of the workers' last minibatch scores (NaN when no worker trained) */
    public double getScore() {
        return workers == 0 ? Double.NaN : scoreSum / workers;
    }

    /** @return the per-worker statistics this holds (empty unless statistics are collected) */
    public List<WorkerStats> getWorkerStats() {
        return java.util.Collections.unmodifiableList(stats);
    }

    private static INDArray row(float[] values) {
        return Nd4j.create(values, 1, values.length);
    }

    @Override
    public long getMinibatches() {
        return minibatches;
    }

    @Override
    public long getExamples() {
        return examples;
    }

    /** Turns a single worker's float result into double sums (before anything is added to it). */
    private void toSums() {
        if (params != null) {
            paramSum = toDouble(params);
            updaterSum = updater == null ? null : toDouble(updater);
            params = null;
            updater = null;
        }
    }

    /** The summed parameters (double), whether this holds one worker's result or a sum. */
    double[] paramSum() {
        toSums();
        return paramSum;
    }

    /** The summed updater state (double), or null when not every worker returned one. */
    double[] updaterSum() {
        toSums();
        return updaterSum;
    }

    /** {@code a += b} where b is either the double sums {@code bd} or one worker's floats {@code bf}. */
    private static double[] addInto(double[] a, double[] bd, float[] bf, String what) {
        int n = bd != null ? bd.length : bf.length;
        if (a.length != n) {
            throw new IllegalStateException("workers returned " + what + " of different lengths: "
                    + a.length + " and " + n);
        }
        if (bd != null) {
            for (int i = 0; i < a.length; i++) {
                a[i] += bd[i];
            }
        } else {
            for (int i = 0; i < a.length; i++) {
                a[i] += bf[i];
            }
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
