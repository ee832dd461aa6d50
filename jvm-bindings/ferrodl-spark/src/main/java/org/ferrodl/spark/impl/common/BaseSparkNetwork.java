package org.ferrodl.spark.impl.common;

import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;

/**
 * The state and accessors {@code SparkDl4jMultiLayer} and {@code SparkComputationGraph} share (the
 * reference's methods of the same names on both): the Spark context, the driver's network, the
 * training master, the default number of evaluation workers, the listeners, the last fit's score
 * and the state a master carries between fits. What differs between the two is behind
 * {@link NetworkKind}.
 *
 * @param <N> the network type
 * @param <B> the minibatch type it trains on
 */
public abstract class BaseSparkNetwork<N extends NativeHandleOwner & Model, B> implements SparkNetwork<N, B> {
    protected final JavaSparkContext sc;
    protected final TrainingMaster<?, ?> trainingMaster;
    protected N network;
    private double lastScore = Double.NaN;
    private int defaultEvaluationWorkers;
    private List<TrainingListener> listeners = List.of();
    /** State a training master carries from one fit of this network to the next (e.g. thresholds). */
    private final Map<String, String> carriedTrainingState = new HashMap<>();

    protected BaseSparkNetwork(JavaSparkContext sc, N network, TrainingMaster<?, ?> trainingMaster,
                               int defaultEvaluationWorkers) {
        this.sc = Objects.requireNonNull(sc, "sparkContext");
        this.network = Objects.requireNonNull(network, "network");
        this.trainingMaster = trainingMaster;
        this.defaultEvaluationWorkers = defaultEvaluationWorkers;
    }

    @Override
    public JavaSparkContext getSparkContext() {
        return sc;
    }

    /** The network on the driver, updated by every fit. */
    @Override
    public N getNetwork() {
        return network;
    }

    /** @param network the network used by every later fit, evaluation and inference */
    public void setNetwork(N network) {
        this.network = Objects.requireNonNull(network, "network");
    }

    public TrainingMaster<?, ?> getTrainingMaster() {
        return trainingMaster;
    }

    /** The training master, or an exception saying this instance was made without one. */
    protected TrainingMaster<?, ?> requireMaster() {
        if (trainingMaster == null) {
            throw new IllegalStateException("this " + getClass().getSimpleName()
                    + " was created without a TrainingMaster");
        }
        return trainingMaster;
    }

    /** Evaluation workers per executor used when a method is not given a number. */
    public int getDefaultEvaluationWorkers() {
        return defaultEvaluationWorkers;
    }

    /**
     * Sets how many networks evaluate at once in one executor JVM when an evaluation method is not
     * given a number (default 4); evaluation tasks beyond that wait.
     */
    public void setDefaultEvaluationWorkers(int workers) {
        if (workers <= 0) {
            throw new IllegalArgumentException("evaluation workers must be positive, got " + workers);
        }
        this.defaultEvaluationWorkers = workers;
    }

    public void setCollectTrainingStats(boolean collectTrainingStats) {
        requireMaster().setCollectTrainingStats(collectTrainingStats);
    }

    /** Statistics of the last fit, or {@code null} when collection was disabled. */
    public SparkTrainingStats getSparkTrainingStats() {
        return requireMaster().getTrainingStats();
    }

    /**
     * Listeners attached to the network of every training worker, under either training master
     * (they run on the executors, so they must be serializable; their effects there, such as
     * logging, stay there). Under gradient sharing the workers train native replicas: see
     * {@code SharedTrainingMaster} for when its listeners are called.
     *
     * @throws IllegalArgumentException for a listener that is not {@link java.io.Serializable}
     */
    public void setListeners(Collection<TrainingListener> listeners) {
        this.listeners = SparkListeners.checked(listeners);
    }

    /** @see #setListeners(Collection) */
    public void setListeners(TrainingListener... listeners) {
        setListeners(listeners == null ? null : Arrays.asList(listeners));
    }

    /** The listeners training workers attach to their networks. */
    @Override
    public List<TrainingListener> getListeners() {
        return listeners;
    }

    /** Mean over workers of each worker's last minibatch score in the last fit (NaN before any fit). */
    public double getScore() {
        return lastScore;
    }

    @Override
    public void setScore(double score) {
        this.lastScore = score;
    }

    @Override
    public synchronized String getCarriedTrainingState(String key) {
        return carriedTrainingState.get(key);
    }

    @Override
    public synchronized void setCarriedTrainingState(String key, String value) {
        if (value == null) {
            carriedTrainingState.remove(key);
        } else {
            carriedTrainingState.put(key, value);
        }
    }
}
