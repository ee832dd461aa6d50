package org.ferrodl.spark.api;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Where the time of one distributed fit went, per worker iteration: each phase's total over the
 * fit, and that total per iteration of one worker — a worker phase divided by all workers'
 * minibatches (the mean worker spends it per step), a driver phase divided by the minibatches of
 * one worker (every worker waits for it). Phases on the critical path add up, with
 * {@link #getUnaccountedMillis()}, to the fit's wall-clock time; concurrent phases (a reader
 * thread, prefetching) cost a core but no step latency and are listed apart.
 *
 * <p>Times from different JVMs (driver and executors) are compared only through wall clocks on
 * the same host (task start delay): on a multi-host cluster that phase includes their clock skew.
 */
public final class TimeBreakdown implements Serializable {
    private static final long serialVersionUID = 1L;

    /** One phase: where it runs, its total over the fit and per worker iteration (ms). */
    public record Phase(String name, String where, boolean criticalPath, double totalMillis,
                        double perIterationMillis) implements Serializable {
    }

    private final String master;
    private final double fitMillis;
    private final long iterationsPerWorker;
    private final long workerIterations;
    private final List<Phase> phases = new ArrayList<>();

    /**
     * @param master              which training master measured it
     * @param fitMillis           wall-clock time of the fit on the driver
     * @param iterationsPerWorker minibatches of the busiest worker (the length of the critical path)
     * @param workerIterations    minibatches of all workers together
     */
    public TimeBreakdown(String master, double fitMillis, long iterationsPerWorker, long workerIterations) {
        this.master = master;
        this.fitMillis = fitMillis;
        this.iterationsPerWorker = Math.max(1, iterationsPerWorker);
        this.workerIterations = Math.max(1, workerIterations);
    }

    /** Adds a phase on a worker, summed over all workers. */
    public TimeBreakdown worker(String name, double totalMillis) {
        phases.add(new Phase(name, "worker", true, totalMillis, totalMillis / workerIterations));
        return this;
    }

    /** Adds a phase the driver (or Spark, between driver and workers) spends while workers wait. */
    public TimeBreakdown driver(String name, double totalMillis) {
        phases.add(new Phase(name, "driver", true, totalMillis, totalMillis / iterationsPerWorker));
        return this;
    }

    /** Adds a phase that runs beside the critical path (summed over workers). */
    public TimeBreakdown concurrent(String name, double totalMillis) {
        phases.add(new Phase(name, "concurrent", false, totalMillis, totalMillis / workerIterations));
        return this;
    }

    public String getMaster() {
        return master;
    }

    public double getFitMillis() {
        return fitMillis;
    }

    public long getIterationsPerWorker() {
        return iterationsPerWorker;
    }

    public long getWorkerIterations() {
        return workerIterations;
    }

    public List<Phase> getPhases() {
        return Collections.unmodifiableList(phases);
    }

    /** Wall-clock time of one worker iteration: the fit's time over the busiest worker's minibatches. */
    public double getWallMillisPerIteration() {
        return fitMillis / iterationsPerWorker;
    }

    /** Wall-clock time per iteration that no critical-path phase accounts for (may be negative). */
    public double getUnaccountedMillis() {
        double sum = 0;
        for (Phase p : phases) {
            if (p.criticalPath()) {
                sum += p.perIterationMillis();
            }
        }
        return getWallMillisPerIteration() - sum;
    }

    /** A table: one line per phase with ms per iteration and share of the wall time per iteration. */
    public String format() {
        double wall = getWallMillisPerIteration();
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "time per worker iteration (%s): %.3f ms wall = %.0f ms / %d "
                        + "minibatches per worker (%d worker minibatches)%n", master, wall, fitMillis,
                iterationsPerWorker, workerIterations));
        for (Phase p : phases) {
            b.append(String.format(Locale.ROOT, "  %-58s %9.3f ms %5.1f%%%s%n", p.name() + " [" + p.where() + "]",
                    p.perIterationMillis(), 100 * p.perIterationMillis() / wall,
                    p.criticalPath() ? "" : " (beside the critical path)"));
        }
        b.append(String.format(Locale.ROOT, "  %-58s %9.3f ms %5.1f%%%n", "unaccounted (critical path)",
                getUnaccountedMillis(), 100 * getUnaccountedMillis() / wall));
        return b.toString();
    }

    @Override
    public String toString() {
        return format();
    }
}
