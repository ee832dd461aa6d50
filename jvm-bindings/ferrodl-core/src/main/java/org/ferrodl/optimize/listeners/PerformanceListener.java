package org.ferrodl.optimize.listeners;

import java.io.Serializable;
import java.util.Locale;
import java.util.logging.Logger;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.api.TrainingListener;

/**
 * Measures training throughput and logs it every {@code frequency} iterations (INFO level, through
 * {@code java.util.logging}, logger name: this class's name).
 *
 * <h2>What is measured</h2>
 * The wall-clock time between consecutive {@link #iterationDone} calls: one minibatch's data
 * loading ("ETL") plus its training step. The first minibatch of an epoch is timed from
 * {@link #onEpochStart}; when a model is fitted one {@code DataSet} at a time (no epoch events) the
 * listener's first minibatch has no start time and is not counted. Time between epochs (e.g. an
 * evaluation) is not counted either.
 *
 * <p>At each report (iterations where {@code iteration % frequency == 0} and at least one minibatch
 * was timed since the previous report) the minibatches timed since the previous report give:
 * <ul>
 *   <li>examples per second: their examples ({@link Model#batchSize()}) / their time;</li>
 *   <li>batches per second: their number / their time;</li>
 *   <li>iteration time: their mean time per minibatch, in milliseconds;</li>
 *   <li>ETL time: the last minibatch's data-loading time in ms (for a
 *       {@link MultiLayerNetwork}, {@link MultiLayerNetwork#getLastEtlTime()}), and the score.</li>
 * </ul>
 * The last reported values stay available through the getters ({@code NaN} before the first
 * report). Not thread-safe: use one listener per model.
 */
public class PerformanceListener implements TrainingListener, Serializable {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = Logger.getLogger(PerformanceListener.class.getName());
    private static final long UNSET = Long.MIN_VALUE;

    private final int frequency;
    private final boolean reportScore;
    private final boolean reportSample;
    private final boolean reportBatch;
    private final boolean reportIteration;
    private final boolean reportTime;
    private final boolean reportEtl;

    private transient long lastTimeNanos = UNSET;
    private long windowNanos;
    private long windowExamples;
    private long windowBatches;

    private double samplesPerSecond = Double.NaN;
    private double batchesPerSecond = Double.NaN;
    private double iterationTimeMs = Double.NaN;
    private double score = Double.NaN;
    private long etlTimeMs;
    private int lastReportedIteration = -1;
    private long reportCount;

    /**
     * Reports examples/s, batches/s, iteration and ETL time, without the score.
     *
     * @param frequency report every this many iterations (&gt;= 1)
     */
    public PerformanceListener(int frequency) {
        this(frequency, false);
    }

    /**
     * @param frequency report every this many iterations (&gt;= 1)
     * @param reportScore whether the log line includes the score
     * @throws IllegalArgumentException for {@code frequency <= 0}
     */
    public PerformanceListener(int frequency, boolean reportScore) {
        this(frequency, reportScore, true, true, true, true, true);
    }

    private PerformanceListener(int frequency, boolean reportScore, boolean reportSample, boolean reportBatch,
                                boolean reportIteration, boolean reportTime, boolean reportEtl) {
        if (frequency <= 0) {
            throw new IllegalArgumentException("frequency must be >= 1, got " + frequency);
        }
        this.frequency = frequency;
        this.reportScore = reportScore;
        this.reportSample = reportSample;
        this.reportBatch = reportBatch;
        this.reportIteration = reportIteration;
        this.reportTime = reportTime;
        this.reportEtl = reportEtl;
    }

    @Override
    public void onEpochStart(Model model) {
        lastTimeNanos = System.nanoTime();
    }

    @Override
    public void iterationDone(Model model, int iteration, int epoch) {
        long now = System.nanoTime();
        if (lastTimeNanos != UNSET) {
            windowNanos += now - lastTimeNanos;
            windowExamples += Math.max(0, model.batchSize());
            windowBatches++;
        }
        lastTimeNanos = now;
        if (iteration % frequency != 0 || windowBatches == 0 || windowNanos <= 0) {
            return;
        }
        double seconds = windowNanos / 1e9;
        samplesPerSecond = windowExamples / seconds;
        batchesPerSecond = windowBatches / seconds;
        iterationTimeMs = windowNanos / 1e6 / windowBatches;
        score = model.score();
        etlTimeMs = model instanceof MultiLayerNetwork ? ((MultiLayerNetwork) model).getLastEtlTime() : 0;
        lastReportedIteration = iteration;
        reportCount++;
        windowNanos = 0;
        windowExamples = 0;
        windowBatches = 0;
        LOG.info(this::describeLast);
        // the log call's own time belongs to no minibatch
        lastTimeNanos = System.nanoTime();
    }

    private String describeLast() {
        StringBuilder b = new StringBuilder();
        if (reportEtl) {
            b.append("ETL: ").append(etlTimeMs).append(" ms; ");
        }
        if (reportIteration) {
            b.append("iteration ").append(lastReportedIteration).append("; ");
        }
        if (reportTime) {
            b.append(String.format(Locale.ROOT, "iteration time: %.3f ms; ", iterationTimeMs));
        }
        if (reportSample) {
            b.append(String.format(Locale.ROOT, "samples/sec: %.3f; ", samplesPerSecond));
        }
        if (reportBatch) {
            b.append(String.format(Locale.ROOT, "batches/sec: %.3f; ", batchesPerSecond));
        }
        if (reportScore) {
            b.append("score: ").append(score).append("; ");
        }
        int n = b.length();
        return n >= 2 ? b.substring(0, n - 2) : b.toString();
    }

    /** @return the reporting frequency in iterations */
    public int getFrequency() {
        return frequency;
    }

    /** @return examples per second at the last report (NaN before the first) */
    public double getLastSamplesPerSecond() {
        return samplesPerSecond;
    }

    /** @return minibatches per second at the last report (NaN before the first) */
    public double getLastBatchesPerSecond() {
        return batchesPerSecond;
    }

    /** @return mean time per minibatch at the last report, in ms (NaN before the first) */
    public double getLastIterationTimeMs() {
        return iterationTimeMs;
    }

    /** @return data-loading time of the minibatch of the last report, in ms */
    public long getLastEtlTimeMs() {
        return etlTimeMs;
    }

    /** @return the model's score at the last report (NaN before the first) */
    public double getLastScore() {
        return score;
    }

    /** @return the iteration of the last report, or -1 */
    public int getLastReportedIteration() {
        return lastReportedIteration;
    }

    /** @return the number of reports so far */
    public long getReportCount() {
        return reportCount;
    }

    private void readObject(java.io.ObjectInputStream in) throws java.io.IOException, ClassNotFoundException {
        in.defaultReadObject();
        lastTimeNanos = UNSET;
    }

    @Override
    public String toString() {
        return "PerformanceListener(frequency=" + frequency + ", reportScore=" + reportScore + ")";
    }

    /** Chooses what the log line contains; everything but the score is on by default. */
    public static class Builder {
        private int frequency = 1;
        private boolean reportScore;
        private boolean reportSample = true;
        private boolean reportBatch = true;
        private boolean reportIteration = true;
        private boolean reportTime = true;
        private boolean reportEtl = true;

        /**
         * @param frequency report every this many iterations (&gt;= 1; default 1)
         * @return this builder
         */
        public Builder setFrequency(int frequency) {
            this.frequency = frequency;
            return this;
        }

        /**
         * @param reportScore include the score
         * @return this builder
         */
        public Builder reportScore(boolean reportScore) {
            this.reportScore = reportScore;
            return this;
        }

        /**
         * @param reportSample include examples per second
         * @return this builder
         */
        public Builder reportSample(boolean reportSample) {
            this.reportSample = reportSample;
            return this;
        }

        /**
         * @param reportBatch include batches per second
         * @return this builder
         */
        public Builder reportBatch(boolean reportBatch) {
            this.reportBatch = reportBatch;
            return this;
        }

        /**
         * @param reportIteration include the iteration number
         * @return this builder
         */
        public Builder reportIteration(boolean reportIteration) {
            this.reportIteration = reportIteration;
            return this;
        }

        /**
         * @param reportTime include the time per iteration
         * @return this builder
         */
        public Builder reportTime(boolean reportTime) {
            this.reportTime = reportTime;
            return this;
        }

        /**
         * @param reportEtl include the data-loading time
         * @return this builder
         */
        public Builder reportETL(boolean reportEtl) {
            this.reportEtl = reportEtl;
            return this;
        }

        /**
         * @return the listener
         * @throws IllegalArgumentException for a frequency &lt;= 0
         */
        public PerformanceListener build() {
            return new PerformanceListener(frequency, reportScore, reportSample, reportBatch, reportIteration,
                    reportTime, reportEtl);
        }
    }
}
