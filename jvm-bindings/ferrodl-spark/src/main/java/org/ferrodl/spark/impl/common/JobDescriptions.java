package org.ferrodl.spark.impl.common;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Spark UI job descriptions for ferrodl's work, so that a user sees in the UI which fit, epoch and
 * split a job belongs to ("ferrodl fit 3 (epoch 2, ParameterAveragingTrainingMaster): split 4/12").
 *
 * <p>Descriptions are Spark local properties of the calling thread ({@code spark.job.description});
 * a {@link Scope} puts the caller's own description back when it closes, so ferrodl never leaves
 * its text on the user's later jobs. Job groups are left alone: they belong to the user (for
 * example {@code cancelJobGroup}).
 */
public final class JobDescriptions {
    /** Spark's local property behind {@code setJobDescription}. */
    static final String SPARK_JOB_DESCRIPTION = "spark.job.description";
    /** Local property holding the current fit's description, for the parts of a fit to extend. */
    static final String FIT_DESCRIPTION = "ferrodl.fit.description";

    private static final AtomicLong FITS = new AtomicLong();

    private JobDescriptions() {
    }

    /** Restores the caller's descriptions when closed. */
    public static final class Scope implements AutoCloseable {
        private final JavaSparkContext sc;
        private final String previousDescription;
        private final String previousFit;

        private Scope(JavaSparkContext sc) {
            this.sc = sc;
            this.previousDescription = sc.getLocalProperty(SPARK_JOB_DESCRIPTION);
            this.previousFit = sc.getLocalProperty(FIT_DESCRIPTION);
        }

        @Override
        public void close() {
            sc.setLocalProperty(SPARK_JOB_DESCRIPTION, previousDescription);
            sc.setLocalProperty(FIT_DESCRIPTION, previousFit);
        }
    }

    /**
     * Describes the jobs of one fit until the scope closes: {@code ferrodl fit <n> (epoch <e>,
     * <master>)}, {@code n} counting the fits of this JVM from 1.
     */
    public static Scope fit(JavaSparkContext sc, long epoch, String master) {
        Scope scope = new Scope(sc);
        String text = "ferrodl fit " + FITS.incrementAndGet() + " (epoch " + epoch + ", " + master + ")";
        sc.setLocalProperty(FIT_DESCRIPTION, text);
        sc.setJobDescription(text);
        return scope;
    }

    /** Describes the jobs of a named step until the scope closes, e.g. {@code ferrodl evaluate}. */
    public static Scope step(JavaSparkContext sc, String text) {
        Scope scope = new Scope(sc);
        sc.setJobDescription(text);
        return scope;
    }

    /**
     * Names the part of the current fit that the next jobs belong to: the fit's description
     * followed by {@code ": " + part}, e.g. {@code split 4/12}. Outside a fit, just {@code part}.
     */
    public static void part(JavaSparkContext sc, String part) {
        String fit = sc.getLocalProperty(FIT_DESCRIPTION);
        sc.setJobDescription(fit == null ? "ferrodl " + part : fit + ": " + part);
    }
}
