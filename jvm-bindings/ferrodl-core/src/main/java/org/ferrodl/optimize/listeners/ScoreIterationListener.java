package org.ferrodl.optimize.listeners;

import java.io.Serializable;
import java.util.logging.Logger;
import org.ferrodl.nn.api.Model;
import org.ferrodl.optimize.api.TrainingListener;

/**
 * Logs the model's score every {@code printIterations} iterations, at INFO level through
 * {@code java.util.logging} (logger name: this class's name), as
 * {@code "Score at iteration N is S"}. {@code N} is the model's iteration counter (the
 * {@code iteration} argument of {@link #iterationDone}), so a line is written whenever
 * {@code N % printIterations == 0}, including the model's very first iteration 0.
 */
public class ScoreIterationListener implements TrainingListener, Serializable {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = Logger.getLogger(ScoreIterationListener.class.getName());

    private final int printIterations;

    /** Logs every 10 iterations. */
    public ScoreIterationListener() {
        this(10);
    }

    /**
     * @param printIterations log every this many iterations (&gt;= 1)
     * @throws IllegalArgumentException for {@code printIterations <= 0}
     */
    public ScoreIterationListener(int printIterations) {
        if (printIterations <= 0) {
            throw new IllegalArgumentException("printIterations must be >= 1, got " + printIterations);
        }
        this.printIterations = printIterations;
    }

    /** @return the logging frequency in iterations */
    public int getPrintIterations() {
        return printIterations;
    }

    @Override
    public void iterationDone(Model model, int iteration, int epoch) {
        if (iteration % printIterations == 0) {
            double score = model.score();
            LOG.info(() -> "Score at iteration " + iteration + " is " + score);
        }
    }

    @Override
    public String toString() {
        return "ScoreIterationListener(" + printIterations + ")";
    }
}
