package org.ferrodl.spark.impl.multilayer;

import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.RDD;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.common.JobDescriptions;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.evaluation.EvaluationFunction;
import org.ferrodl.spark.impl.evaluation.ScoreFunction;
import scala.Tuple2;

/**
 * Trains and evaluates a {@link MultiLayerNetwork} on Spark. Training is delegated to the
 * {@link TrainingMaster}; evaluation and scoring run one network per partition from a broadcast
 * snapshot of the driver's network. The driver's network is updated in place by {@code fit}.
 * Not thread-safe: one fit or evaluation at a time per instance.
 */
public class SparkDl4jMultiLayer {
    /** Default minibatch size of evaluation and scoring in each worker. */
    public static final int DEFAULT_EVAL_SCORE_BATCH_SIZE = 64;
    /** Default number of evaluation workers (kept for API compatibility; see {@link #setDefaultEvaluationWorkers}). */
    public static final int DEFAULT_EVAL_WORKERS = 4;

    private final JavaSparkContext sc;
    private final TrainingMaster trainingMaster;
    private MultiLayerNetwork network;
    private double lastScore = Double.NaN;
    private int defaultEvaluationWorkers = DEFAULT_EVAL_WORKERS;
    /** State a training master carries from one fit of this network to the next (e.g. thresholds). */
    private final java.util.Map<String, String> carriedTrainingState = new java.util.HashMap<>();

    public SparkDl4jMultiLayer(SparkContext sparkContext, MultiLayerConfiguration conf, TrainingMaster trainingMaster) {
        this(new JavaSparkContext(sparkContext), initNetwork(conf), trainingMaster);
    }

    public SparkDl4jMultiLayer(JavaSparkContext sc, MultiLayerConfiguration conf, TrainingMaster trainingMaster) {
        this(sc, initNetwork(conf), trainingMaster);
    }

    public SparkDl4jMultiLayer(SparkContext sparkContext, MultiLayerNetwork network, TrainingMaster trainingMaster) {
        this(new JavaSparkContext(sparkContext), network, trainingMaster);
    }

    public SparkDl4jMultiLayer(JavaSparkContext sc, MultiLayerNetwork network, TrainingMaster trainingMaster) {
        this.sc = Objects.requireNonNull(sc, "sparkContext");
        this.network = Objects.requireNonNull(network, "network");
        this.trainingMaster = trainingMaster;
    }

    private static MultiLayerNetwork initNetwork(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(Objects.requireNonNull(conf, "configuration"));
        net.init();
        return net;
    }

    public JavaSparkContext getSparkContext() {
        return sc;
    }

    /** The network on the driver, updated by every fit. */
    public MultiLayerNetwork getNetwork() {
        return network;
    }

    public TrainingMaster getTrainingMaster() {
        return trainingMaster;
    }

    public void setNetwork(MultiLayerNetwork network) {
        this.network = Objects.requireNonNull(network, "network");
    }

    public int getDefaultEvaluationWorkers() {
        return defaultEvaluationWorkers;
    }

    /**
     * Sets the default number of evaluation workers. ferrodl evaluates with one network per Spark
     * partition (native inference is multi-threaded inside the task), so this value is recorded for
     * API compatibility and reported, not used to spawn threads.
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

    private TrainingMaster requireMaster() {
        if (trainingMaster == null) {
            throw new IllegalStateException("this SparkDl4jMultiLayer was created without a TrainingMaster");
        }
        return trainingMaster;
    }

    /** Fits the network on {@code trainingData}; equivalent to {@code fit(trainingData.toJavaRDD())}. */
    public MultiLayerNetwork fit(RDD<DataSet> trainingData) {
        return fit(trainingData.toJavaRDD());
    }

    /** Fits the network on {@code trainingData} (one pass) and returns the updated driver network. */
    public MultiLayerNetwork fit(JavaRDD<DataSet> trainingData) {
        Objects.requireNonNull(trainingData, "trainingData");
        TrainingMaster master = requireMaster();
        try (JobDescriptions.Scope ui = JobDescriptions.fit(sc, network.getEpochCount(),
                master.getClass().getSimpleName())) {
            master.executeTraining(this, trainingData);
        }
        return network;
    }

    /** Mean over workers of each worker's last minibatch score in the last fit (NaN before any fit). */
    public double getScore() {
        return lastScore;
    }

    /**
     * State a training master keeps between fits of this network (not of other networks), e.g.
     * gradient sharing's averaged encoding thresholds. Null when none was stored under {@code key}.
     */
    public synchronized String getCarriedTrainingState(String key) {
        return carriedTrainingState.get(key);
    }

    /** Stores (or, with null, removes) state carried to the next fit of this network. */
    public synchronized void setCarriedTrainingState(String key, String value) {
        if (value == null) {
            carriedTrainingState.remove(key);
        } else {
            carriedTrainingState.put(key, value);
        }
    }

    /** Called by training masters at the end of a fit. */
    public void setScore(double score) {
        this.lastScore = score;
    }

    /** Evaluates classification on {@code data} (minibatches of {@value #DEFAULT_EVAL_SCORE_BATCH_SIZE}). */
    public Evaluation evaluate(JavaRDD<DataSet> data) {
        return evaluate(data, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public Evaluation evaluate(RDD<DataSet> data) {
        return evaluate(data.toJavaRDD());
    }

    /** Evaluates classification on {@code data} with minibatches of at most {@code evalBatchSize}. */
    public Evaluation evaluate(JavaRDD<DataSet> data, int evalBatchSize) {
        if (evalBatchSize <= 0) {
            throw new IllegalArgumentException("evaluation batch size must be positive, got " + evalBatchSize);
        }
        Broadcast<NetworkSnapshot> snapshot = sc.broadcast(NetworkSnapshot.of(network, false));
        try (JobDescriptions.Scope ui = JobDescriptions.step(sc, "ferrodl evaluate")) {
            Evaluation result = data.mapPartitions(new EvaluationFunction(snapshot, evalBatchSize))
                    .treeReduce((a, b) -> {
                        a.merge(b);
                        return a;
                    });
            if (result.getNumRowCounter() == 0) {
                throw new DL4JInvalidInputException("cannot evaluate: the RDD holds no examples");
            }
            return result;
        } finally {
            snapshot.destroy();
        }
    }

    public double calculateScore(RDD<DataSet> data, boolean average) {
        return calculateScore(data.toJavaRDD(), average);
    }

    public double calculateScore(JavaRDD<DataSet> data, boolean average) {
        return calculateScore(data, average, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /**
     * Score (loss plus regularization of each minibatch) over all examples, summed or averaged per
     * example.
     */
    public double calculateScore(JavaRDD<DataSet> data, boolean average, int minibatchSize) {
        if (minibatchSize <= 0) {
            throw new IllegalArgumentException("minibatch size must be positive, got " + minibatchSize);
        }
        Broadcast<NetworkSnapshot> snapshot = sc.broadcast(NetworkSnapshot.of(network, false));
        try (JobDescriptions.Scope ui = JobDescriptions.step(sc, "ferrodl score")) {
            Tuple2<Double, Long> total = data.mapPartitions(new ScoreFunction(snapshot, minibatchSize))
                    .fold(new Tuple2<>(0.0, 0L), (a, b) -> new Tuple2<>(a._1() + b._1(), a._2() + b._2()));
            if (total._2() == 0) {
                throw new DL4JInvalidInputException("cannot score: the RDD holds no examples");
            }
            return average ? total._1() / total._2() : total._1();
        } finally {
            snapshot.destroy();
        }
    }
}
