package org.ferrodl.spark.impl.graph;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaDoubleRDD;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.RDD;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.core.loader.MultiDataSetLoader;
import org.ferrodl.core.loader.impl.SerializedDataSetLoader;
import org.ferrodl.core.loader.impl.SerializedMultiDataSetLoader;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.common.JobDescriptions;
import org.ferrodl.spark.impl.common.LoadFunctions;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.BaseSparkNetwork;
import org.ferrodl.spark.impl.common.SparkListeners;
import org.ferrodl.spark.impl.common.SparkNetwork;
import org.ferrodl.spark.impl.evaluation.FeedForwardWithKeyFunction;
import org.ferrodl.spark.impl.evaluation.IEvaluateFunction;
import org.ferrodl.spark.impl.evaluation.ScoreExamplesFunction;
import org.ferrodl.spark.impl.evaluation.ScoreExamplesWithKeyFunction;
import org.ferrodl.spark.impl.evaluation.ScoreFunction;
import scala.Tuple2;

/**
 * Trains and evaluates a {@link ComputationGraph} on Spark: the graph counterpart of
 * {@code SparkDl4jMultiLayer}, with the same training masters (their code is shared between the
 * two network types) and the {@link MultiDataSet} forms of every method. Training is delegated to
 * the {@link TrainingMaster}; evaluation, scoring and inference run one graph per partition from a
 * broadcast snapshot of the driver's graph. The driver's graph is updated in place by {@code fit}.
 *
 * <p>DataSet methods need a graph with one input and one output (each DataSet becomes a one-array
 * MultiDataSet). Evaluation methods without an output name need a graph with one output; use
 * {@link #doEvaluationMDS(JavaRDD, int, int, String, IEvaluation[])} to evaluate one output of a
 * graph with several.
 *
 * <p>Before training, the first MultiDataSet of the RDD is checked against the graph (number of
 * features and labels arrays, their widths), so a wrong input fails on the driver with a message
 * that names the graph's inputs and outputs. Not thread-safe: one fit or evaluation at a time per
 * instance.
 */
public class SparkComputationGraph extends BaseSparkNetwork<ComputationGraph, MultiDataSet> {
    /** Default minibatch size of evaluation and scoring in each worker. */
    public static final int DEFAULT_EVAL_SCORE_BATCH_SIZE = 64;
    /** Default number of evaluation workers per executor. */
    public static final int DEFAULT_EVAL_WORKERS = 4;
    /** Threshold steps of the ROC methods without a step count. */
    public static final int DEFAULT_ROC_THRESHOLD_STEPS = 32;


    public SparkComputationGraph(SparkContext sparkContext, ComputationGraph network,
                                 TrainingMaster<?, ?> trainingMaster) {
        this(new JavaSparkContext(sparkContext), network, trainingMaster);
    }

    /**
     * @param sc the Spark context
     * @param network the graph (initialized)
     * @param trainingMaster needed for training; may be null when the instance only evaluates or
     *     predicts
     */
    public SparkComputationGraph(JavaSparkContext sc, ComputationGraph network, TrainingMaster<?, ?> trainingMaster) {
        super(sc, network, trainingMaster, DEFAULT_EVAL_WORKERS);
    }

    public SparkComputationGraph(SparkContext sparkContext, ComputationGraphConfiguration conf,
                                 TrainingMaster<?, ?> trainingMaster) {
        this(new JavaSparkContext(sparkContext), initNetwork(conf), trainingMaster);
    }

    public SparkComputationGraph(JavaSparkContext sc, ComputationGraphConfiguration conf,
                                 TrainingMaster<?, ?> trainingMaster) {
        this(sc, initNetwork(conf), trainingMaster);
    }

    /** The prediction constructor: evaluation, scoring and inference only (no training master). */
    public SparkComputationGraph(JavaSparkContext sc, ComputationGraph network) {
        this(sc, network, null);
    }

    private static ComputationGraph initNetwork(ComputationGraphConfiguration conf) {
        ComputationGraph net = new ComputationGraph(Objects.requireNonNull(conf, "configuration"));
        net.init();
        return net;
    }

    @Override
    public NetworkKind<ComputationGraph, MultiDataSet> getNetworkKind() {
        return NetworkKind.GRAPH;
    }

    // ---------------------------------------------------------------------------------- training

    /** {@link #fit(JavaRDD)} of {@code rdd.toJavaRDD()}. */
    public ComputationGraph fit(RDD<DataSet> rdd) {
        return fit(rdd.toJavaRDD());
    }

    /** Fits a graph with one input and one output on DataSets (one pass); returns the driver's graph. */
    public ComputationGraph fit(JavaRDD<DataSet> rdd) {
        Objects.requireNonNull(rdd, "rdd");
        checkFirst(rdd.take(1).stream().map(MultiDataSet::fromDataSet).toList(), "DataSet");
        return train(m -> m.executeTraining(this, rdd));
    }

    /** {@link #fitMultiDataSet(JavaRDD)} of {@code rdd.toJavaRDD()}. */
    public ComputationGraph fitMultiDataSet(RDD<MultiDataSet> rdd) {
        return fitMultiDataSet(rdd.toJavaRDD());
    }

    /** Fits the graph on MultiDataSets (one pass) and returns the updated driver graph. */
    public ComputationGraph fitMultiDataSet(JavaRDD<MultiDataSet> rdd) {
        Objects.requireNonNull(rdd, "rdd");
        checkFirst(rdd.take(1), "MultiDataSet");
        return train(m -> m.executeTrainingMDS(this, rdd));
    }

    /**
     * Fits on a directory of DataSet files written by {@link DataSet#save} (any Hadoop FileSystem
     * URI); the files directly in the directory, in name order, without names starting with
     * {@code _} or {@code .}.
     */
    public ComputationGraph fit(String path) {
        return fitPaths(parallelizedFiles(path));
    }

    /** @deprecated use {@link #fit(String)}; {@code minPartitions} sets the partitions of the path list. */
    @Deprecated
    public ComputationGraph fit(String path, int minPartitions) {
        return fitPaths(sc.parallelize(LoadFunctions.listFiles(sc, path), checkPartitions(minPartitions)));
    }

    /** Fits on a directory of MultiDataSet files written by {@link MultiDataSet#save} (as {@link #fit(String)}). */
    public ComputationGraph fitMultiDataSet(String path) {
        return fitPathsMultiDataSet(parallelizedFiles(path));
    }

    /** @deprecated use {@link #fitMultiDataSet(String)}. */
    @Deprecated
    public ComputationGraph fitMultiDataSet(String path, int minPartitions) {
        return fitPathsMultiDataSet(sc.parallelize(LoadFunctions.listFiles(sc, path), checkPartitions(minPartitions)));
    }

    /** Fits on the DataSet files at {@code paths} (read with {@link SerializedDataSetLoader}). */
    public ComputationGraph fitPaths(JavaRDD<String> paths) {
        return fitPaths(paths, new SerializedDataSetLoader());
    }

    /** Fits on the files at {@code paths}, each read with {@code loader} on the executors. */
    public ComputationGraph fitPaths(JavaRDD<String> paths, DataSetLoader loader) {
        Objects.requireNonNull(paths, "paths");
        Objects.requireNonNull(loader, "loader");
        return train(m -> m.executeTrainingPaths(null, this, paths, loader, null));
    }

    /** Fits on the MultiDataSet files at {@code paths} (read with {@link SerializedMultiDataSetLoader}). */
    public ComputationGraph fitPathsMultiDataSet(JavaRDD<String> paths) {
        return fitPaths(paths, new SerializedMultiDataSetLoader());
    }

    /** Fits on the files at {@code paths}, each read with {@code loader} on the executors. */
    public ComputationGraph fitPaths(JavaRDD<String> paths, MultiDataSetLoader loader) {
        Objects.requireNonNull(paths, "paths");
        Objects.requireNonNull(loader, "loader");
        return train(m -> m.executeTrainingPaths(null, this, paths, null, loader));
    }

    private interface MasterCall {
        void run(TrainingMaster<?, ?> master);
    }

    private ComputationGraph train(MasterCall call) {
        TrainingMaster<?, ?> master = requireMaster();
        try (JobDescriptions.Scope ui = JobDescriptions.fit(sc, network.getEpochCount(),
                master.getClass().getSimpleName())) {
            call.run(master);
        }
        return network;
    }

    private JavaRDD<String> parallelizedFiles(String path) {
        List<String> files = LoadFunctions.listFiles(sc, path);
        return sc.parallelize(files, Math.min(files.size(), Math.max(1, sc.defaultParallelism())));
    }

    private static int checkPartitions(int minPartitions) {
        if (minPartitions < 1) {
            throw new IllegalArgumentException("minPartitions must be >= 1, got " + minPartitions);
        }
        return minPartitions;
    }

    /**
     * Checks the first training object against the graph on the driver: an empty RDD, a wrong
     * number of features or labels arrays, or a width the graph does not take fail here with a
     * message naming the graph's inputs and outputs (instead of inside a Spark task).
     */
    private void checkFirst(List<MultiDataSet> first, String what) {
        if (first.isEmpty()) {
            throw new DL4JInvalidInputException("cannot fit: the training RDD is empty (0 " + what + " objects)");
        }
        MultiDataSet d = first.get(0);
        ComputationGraphConfiguration conf = network.getConfiguration();
        checkArrays(d.getFeatures(), conf.getNetworkInputs(), network.numInputs(), "features", "inputs", what);
        checkArrays(d.getLabels(), conf.getNetworkOutputs(), network.numOutputs(), "labels", "outputs", what);
    }

    private static void checkArrays(INDArray[] arrays, List<String> names, long[] widths, String part, String ports,
                                    String what) {
        int n = arrays == null ? 0 : arrays.length;
        if (n != names.size()) {
            throw new DL4JInvalidInputException("the training " + what + "s hold " + n + " " + part + " arrays but "
                    + "the graph has " + names.size() + " " + ports + " " + names);
        }
        for (int k = 0; k < n; k++) {
            INDArray a = arrays[k];
            if (a == null || a.rank() < 2) {
                throw new DL4JInvalidInputException("the training " + what + "s' " + part + " for \"" + names.get(k)
                        + "\" must have the examples along axis 0 and at least one more axis, got "
                        + (a == null ? "null" : "shape " + Arrays.toString(a.shape())));
            }
            long width = a.size(0) == 0 ? 0 : a.length() / a.size(0);
            if (widths[k] > 0 && width != widths[k]) {
                throw new DL4JInvalidInputException("the training " + what + "s' " + part + " for \"" + names.get(k)
                        + "\" have " + width + " values per example (shape " + Arrays.toString(a.shape())
                        + ") but the graph's " + ports.substring(0, ports.length() - 1) + " \"" + names.get(k)
                        + "\" takes " + widths[k]);
            }
        }
    }

    // --------------------------------------------------------------------------------- scoring

    private static JavaRDD<MultiDataSet> multi(JavaRDD<DataSet> data) {
        return Objects.requireNonNull(data, "data").map(MultiDataSet::fromDataSet);
    }

    /** {@link #calculateScore(JavaRDD, boolean, int)} with minibatches of {@value #DEFAULT_EVAL_SCORE_BATCH_SIZE}. */
    public double calculateScore(JavaRDD<DataSet> data, boolean average) {
        return calculateScore(data, average, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /**
     * Score (losses plus regularization of each minibatch) over all examples of a graph with one
     * input and one output, summed or averaged per example.
     */
    public double calculateScore(JavaRDD<DataSet> data, boolean average, int minibatchSize) {
        return calculateScoreMultiDataSet(multi(data), average, minibatchSize);
    }

    /** {@link #calculateScoreMultiDataSet(JavaRDD, boolean, int)} with the default minibatch size. */
    public double calculateScoreMultiDataSet(JavaRDD<MultiDataSet> data, boolean average) {
        return calculateScoreMultiDataSet(data, average, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /**
     * Score (sum of the output losses plus regularization of each minibatch) over all examples,
     * summed or averaged per example; each partition is scored in minibatches of at most
     * {@code minibatchSize}.
     *
     * @throws DL4JInvalidInputException when {@code data} holds no example
     */
    public double calculateScoreMultiDataSet(JavaRDD<MultiDataSet> data, boolean average, int minibatchSize) {
        Objects.requireNonNull(data, "data");
        checkBatch(minibatchSize);
        Broadcast<NetworkSnapshot<ComputationGraph>> snapshot = snapshot();
        try (JobDescriptions.Scope ui = JobDescriptions.step(sc, "ferrodl score")) {
            Tuple2<Double, Long> total = data.mapPartitions(new ScoreFunction<>(snapshot, NetworkKind.GRAPH,
                            minibatchSize))
                    .fold(new Tuple2<>(0.0, 0L), (a, b) -> new Tuple2<>(a._1() + b._1(), a._2() + b._2()));
            if (total._2() == 0) {
                throw new DL4JInvalidInputException("cannot score: the RDD holds no examples");
            }
            return average ? total._1() / total._2() : total._1();
        } finally {
            snapshot.destroy();
        }
    }

    private static void checkBatch(int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("minibatch size must be positive, got " + batchSize);
        }
    }

    /** {@link #scoreExamples(JavaRDD, boolean, int)} with the default minibatch size. */
    public JavaDoubleRDD scoreExamples(JavaRDD<DataSet> data, boolean includeRegularizationTerms) {
        return scoreExamples(data, includeRegularizationTerms, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** The score of every example of a graph with one input and one output, in RDD order (lazy). */
    public JavaDoubleRDD scoreExamples(JavaRDD<DataSet> data, boolean includeRegularizationTerms, int batchSize) {
        return scoreExamplesMultiDataSet(multi(data), includeRegularizationTerms, batchSize);
    }

    /** {@link #scoreExamplesMultiDataSet(JavaRDD, boolean, int)} with the default minibatch size. */
    public JavaDoubleRDD scoreExamplesMultiDataSet(JavaRDD<MultiDataSet> data, boolean includeRegularizationTerms) {
        return scoreExamplesMultiDataSet(data, includeRegularizationTerms, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /**
     * The score of every example (summed over the outputs), in the order of the RDD, computed in
     * minibatches of at most {@code batchSize}; equal to the local
     * {@link ComputationGraph#scoreExamples(MultiDataSet, boolean)} of each example. Lazy: it uses a
     * snapshot of the graph taken now.
     */
    public JavaDoubleRDD scoreExamplesMultiDataSet(JavaRDD<MultiDataSet> data, boolean includeRegularizationTerms,
                                                   int batchSize) {
        Objects.requireNonNull(data, "data");
        checkBatch(batchSize);
        return data.mapPartitionsToDouble(new ScoreExamplesFunction<>(snapshot(), NetworkKind.GRAPH,
                includeRegularizationTerms, batchSize));
    }

    /** {@link #scoreExamples(JavaPairRDD, boolean, int)} with the default minibatch size. */
    public <K> JavaPairRDD<K, Double> scoreExamples(JavaPairRDD<K, DataSet> data, boolean includeRegularizationTerms) {
        return scoreExamples(data, includeRegularizationTerms, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** One score per key; every DataSet must hold exactly one example. Lazy. */
    public <K> JavaPairRDD<K, Double> scoreExamples(JavaPairRDD<K, DataSet> data, boolean includeRegularizationTerms,
                                                    int batchSize) {
        Objects.requireNonNull(data, "data");
        return scoreExamplesMultiDataSet(data.mapValues(MultiDataSet::fromDataSet), includeRegularizationTerms,
                batchSize);
    }

    /** {@link #scoreExamplesMultiDataSet(JavaPairRDD, boolean, int)} with the default minibatch size. */
    public <K> JavaPairRDD<K, Double> scoreExamplesMultiDataSet(JavaPairRDD<K, MultiDataSet> data,
                                                                boolean includeRegularizationTerms) {
        return scoreExamplesMultiDataSet(data, includeRegularizationTerms, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /**
     * One score per key, computed in minibatches of at most {@code batchSize}; every MultiDataSet
     * must hold exactly one example (otherwise the job fails naming the key). Lazy.
     */
    public <K> JavaPairRDD<K, Double> scoreExamplesMultiDataSet(JavaPairRDD<K, MultiDataSet> data,
                                                                boolean includeRegularizationTerms, int batchSize) {
        Objects.requireNonNull(data, "data");
        checkBatch(batchSize);
        return data.mapPartitionsToPair(new ScoreExamplesWithKeyFunction<>(snapshot(), NetworkKind.GRAPH,
                includeRegularizationTerms, batchSize));
    }

    // ------------------------------------------------------------------------------- inference

    /**
     * The graph's outputs for every key: each value is one example's features, one array per
     * network input ({@code [width]} or {@code [1, width]}); each result holds one {@code [1, nOut]}
     * row per network output. Lazy.
     */
    public <K> JavaPairRDD<K, INDArray[]> feedForwardWithKey(JavaPairRDD<K, INDArray[]> featuresData, int batchSize) {
        Objects.requireNonNull(featuresData, "featuresData");
        return feedForwardWithMaskAndKey(featuresData.mapValues(f -> new Tuple2<INDArray[], INDArray[]>(f, null)),
                batchSize);
    }

    /**
     * {@link #feedForwardWithKey} with feature masks: each value is (features per input, masks per
     * input or null; null entries for inputs without a mask).
     */
    public <K> JavaPairRDD<K, INDArray[]> feedForwardWithMaskAndKey(
            JavaPairRDD<K, Tuple2<INDArray[], INDArray[]>> featuresDataAndMask, int batchSize) {
        Objects.requireNonNull(featuresDataAndMask, "featuresDataAndMask");
        checkBatch(batchSize);
        return featuresDataAndMask.mapPartitionsToPair(new FeedForwardWithKeyFunction<>(snapshot(), NetworkKind.GRAPH,
                batchSize));
    }

    private Broadcast<NetworkSnapshot<ComputationGraph>> snapshot() {
        return sc.broadcast(NetworkSnapshot.of(NetworkKind.GRAPH, network, false));
    }

    // ------------------------------------------------------------------------------ evaluation

    /** {@link #evaluate(JavaRDD)} of {@code data.toJavaRDD()}. */
    public Evaluation evaluate(RDD<DataSet> data) {
        return evaluate(data.toJavaRDD());
    }

    /** Classification evaluation of a graph with one input and one output. */
    public Evaluation evaluate(JavaRDD<DataSet> data) {
        return evaluateMDS(multi(data));
    }

    /** Classification evaluation whose classes are named {@code labelsList}. */
    public Evaluation evaluate(JavaRDD<DataSet> data, List<String> labelsList) {
        return evaluate(data, labelsList, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** Classification evaluation whose classes are named {@code labelsList}, with the given minibatch size. */
    public Evaluation evaluate(JavaRDD<DataSet> data, List<String> labelsList, int evalBatchSize) {
        return doEvaluationMDS(multi(data), evalBatchSize, new Evaluation(labelsList))[0];
    }

    /** Classification evaluation of the DataSet files in directory {@code path}. */
    public Evaluation evaluate(String path, DataSetLoader loader) {
        return evaluate(path, DEFAULT_EVAL_SCORE_BATCH_SIZE, loader);
    }

    /** Classification evaluation of the DataSet files in directory {@code path}, with the given minibatch size. */
    public Evaluation evaluate(String path, int batchSize, DataSetLoader loader) {
        return doEvaluation(parallelizedFiles(path), getDefaultEvaluationWorkers(), batchSize, loader,
                new Evaluation())[0];
    }

    /** Classification evaluation of a single-output graph on the MultiDataSet files in directory {@code path}. */
    public Evaluation evaluate(String path, MultiDataSetLoader loader) {
        return evaluate(path, DEFAULT_EVAL_SCORE_BATCH_SIZE, loader);
    }

    /** As {@link #evaluate(String, MultiDataSetLoader)} with the given minibatch size. */
    public Evaluation evaluate(String path, int batchSize, MultiDataSetLoader loader) {
        return doEvaluation(parallelizedFiles(path), getDefaultEvaluationWorkers(), batchSize, loader,
                new Evaluation())[0];
    }

    /** Regression evaluation of a graph with one input and one output. */
    public RegressionEvaluation evaluateRegression(JavaRDD<DataSet> data) {
        return evaluateRegression(data, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public RegressionEvaluation evaluateRegression(JavaRDD<DataSet> data, int minibatchSize) {
        return evaluateRegressionMDS(multi(data), minibatchSize);
    }

    /** Thresholded ROC ({@value #DEFAULT_ROC_THRESHOLD_STEPS} steps) of a binary classifier. */
    public ROC evaluateROC(JavaRDD<DataSet> data) {
        return evaluateROC(data, DEFAULT_ROC_THRESHOLD_STEPS, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** ROC of a binary classifier ({@code thresholdSteps} 0: exact). */
    public ROC evaluateROC(JavaRDD<DataSet> data, int thresholdSteps, int evaluationMinibatchSize) {
        return evaluateROCMDS(multi(data), thresholdSteps, evaluationMinibatchSize);
    }

    /** Thresholded one-vs-all ROC ({@value #DEFAULT_ROC_THRESHOLD_STEPS} steps) of a multi-class classifier. */
    public ROCMultiClass evaluateROCMultiClass(JavaRDD<DataSet> data) {
        return evaluateROCMultiClass(data, DEFAULT_ROC_THRESHOLD_STEPS, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** One-vs-all ROC of a multi-class classifier ({@code thresholdSteps} 0: exact). */
    public ROCMultiClass evaluateROCMultiClass(JavaRDD<DataSet> data, int thresholdSteps, int evaluationMinibatchSize) {
        return evaluateROCMultiClassMDS(multi(data), thresholdSteps, evaluationMinibatchSize);
    }

    /** Classification evaluation of a single-output graph on MultiDataSets. */
    public Evaluation evaluateMDS(JavaRDD<MultiDataSet> data) {
        return evaluateMDS(data, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public Evaluation evaluateMDS(JavaRDD<MultiDataSet> data, int minibatchSize) {
        return doEvaluationMDS(data, minibatchSize, new Evaluation())[0];
    }

    /** Regression evaluation of a single-output graph on MultiDataSets. */
    public RegressionEvaluation evaluateRegressionMDS(JavaRDD<MultiDataSet> data) {
        return evaluateRegressionMDS(data, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public RegressionEvaluation evaluateRegressionMDS(JavaRDD<MultiDataSet> data, int minibatchSize) {
        singleOutput();
        return doEvaluationMDS(data, minibatchSize, new RegressionEvaluation(network.numOutputs()[0]))[0];
    }

    /** Thresholded ROC of a single-output binary classifier on MultiDataSets. */
    public ROC evaluateROCMDS(JavaRDD<MultiDataSet> data) {
        return evaluateROCMDS(data, DEFAULT_ROC_THRESHOLD_STEPS, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public ROC evaluateROCMDS(JavaRDD<MultiDataSet> data, int rocThresholdNumSteps, int minibatchSize) {
        return doEvaluationMDS(data, minibatchSize, new ROC(rocThresholdNumSteps))[0];
    }

    /** Thresholded one-vs-all ROC of a single-output multi-class classifier on MultiDataSets. */
    public ROCMultiClass evaluateROCMultiClassMDS(JavaRDD<MultiDataSet> data) {
        return evaluateROCMultiClassMDS(data, DEFAULT_ROC_THRESHOLD_STEPS, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public ROCMultiClass evaluateROCMultiClassMDS(JavaRDD<MultiDataSet> data, int rocThresholdNumSteps,
                                                  int minibatchSize) {
        return doEvaluationMDS(data, minibatchSize, new ROCMultiClass(rocThresholdNumSteps))[0];
    }

    /** Every given (empty) evaluation of a single-output graph over DataSets in one pass. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<DataSet> data, int evalBatchSize,
                                                            T... emptyEvaluations) {
        return doEvaluation(data, getDefaultEvaluationWorkers(), evalBatchSize, emptyEvaluations);
    }

    /** As {@link #doEvaluation(JavaRDD, int, IEvaluation[])} with at most {@code evalNumWorkers} graphs per executor. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<DataSet> data, int evalNumWorkers,
                                                            int evalBatchSize, T... emptyEvaluations) {
        return doEvaluationMDS(multi(data), evalNumWorkers, evalBatchSize, emptyEvaluations);
    }

    /** Every given (empty) evaluation of a single-output graph over MultiDataSets in one pass. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluationMDS(JavaRDD<MultiDataSet> data, int evalBatchSize,
                                                               T... emptyEvaluations) {
        return doEvaluationMDS(data, getDefaultEvaluationWorkers(), evalBatchSize, emptyEvaluations);
    }

    /**
     * Every given (empty) evaluation of a single-output graph over MultiDataSets in one pass, with
     * at most {@code evalNumWorkers} graphs evaluating per executor; returns them filled (the given
     * objects are not modified).
     *
     * @throws IllegalStateException when the graph has several outputs (name one with
     *     {@link #doEvaluationMDS(JavaRDD, int, int, String, IEvaluation[])})
     * @throws DL4JInvalidInputException when {@code data} holds no example
     */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluationMDS(JavaRDD<MultiDataSet> data, int evalNumWorkers,
                                                               int evalBatchSize, T... emptyEvaluations) {
        singleOutput();
        return evaluateOutput(data, 0, evalNumWorkers, evalBatchSize, emptyEvaluations);
    }

    /**
     * Every given (empty) evaluation of output {@code outputName} over MultiDataSets in one pass:
     * the evaluations see that output's predictions, labels and labels mask. (An addition to the
     * reference, which evaluates single-output graphs only on Spark.)
     *
     * @throws IllegalArgumentException when the graph has no output of that name (the message lists them)
     */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluationMDS(JavaRDD<MultiDataSet> data, int evalNumWorkers,
                                                               int evalBatchSize, String outputName,
                                                               T... emptyEvaluations) {
        List<String> outputs = network.getConfiguration().getNetworkOutputs();
        int index = outputs.indexOf(outputName);
        if (index < 0) {
            throw new IllegalArgumentException("the graph has no output named \"" + outputName + "\"; its outputs are "
                    + outputs);
        }
        return evaluateOutput(data, index, evalNumWorkers, evalBatchSize, emptyEvaluations);
    }

    /** {@link #doEvaluation(JavaRDD, int, IEvaluation[])} on DataSet files read with {@code loader}. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<String> paths, DataSetLoader loader,
                                                            T... emptyEvaluations) {
        return doEvaluation(paths, getDefaultEvaluationWorkers(), DEFAULT_EVAL_SCORE_BATCH_SIZE, loader,
                emptyEvaluations);
    }

    /** {@link #doEvaluation(JavaRDD, int, int, IEvaluation[])} on DataSet files read with {@code loader}. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<String> paths, int evalNumWorkers,
                                                            int evalBatchSize, DataSetLoader loader,
                                                            T... emptyEvaluations) {
        return doEvaluation(LoadFunctions.load(sc, paths, loader), evalNumWorkers, evalBatchSize, emptyEvaluations);
    }

    /** {@link #doEvaluationMDS(JavaRDD, int, IEvaluation[])} on MultiDataSet files read with {@code loader}. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<String> paths, MultiDataSetLoader loader,
                                                            T... emptyEvaluations) {
        return doEvaluation(paths, getDefaultEvaluationWorkers(), DEFAULT_EVAL_SCORE_BATCH_SIZE, loader,
                emptyEvaluations);
    }

    /** {@link #doEvaluationMDS(JavaRDD, int, int, IEvaluation[])} on MultiDataSet files read with {@code loader}. */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<String> paths, int evalNumWorkers,
                                                            int evalBatchSize, MultiDataSetLoader loader,
                                                            T... emptyEvaluations) {
        return doEvaluationMDS(LoadFunctions.loadMulti(sc, paths, loader), evalNumWorkers, evalBatchSize,
                emptyEvaluations);
    }

    private void singleOutput() {
        List<String> outputs = network.getConfiguration().getNetworkOutputs();
        if (outputs.size() != 1) {
            throw new IllegalStateException("this graph has " + outputs.size() + " outputs " + outputs + ": one "
                    + "evaluation cannot score them all; name the output with doEvaluationMDS(data, workers, "
                    + "batchSize, outputName, evaluations...)");
        }
    }

    @SuppressWarnings("unchecked")
    private <T extends IEvaluation<?>> T[] evaluateOutput(JavaRDD<MultiDataSet> data, int outputIndex,
                                                         int evalNumWorkers, int evalBatchSize,
                                                         T[] emptyEvaluations) {
        Objects.requireNonNull(data, "data");
        if (evalBatchSize <= 0) {
            throw new IllegalArgumentException("evaluation batch size must be positive, got " + evalBatchSize);
        }
        if (evalNumWorkers <= 0) {
            throw new IllegalArgumentException("evaluation workers must be positive, got " + evalNumWorkers);
        }
        if (emptyEvaluations == null || emptyEvaluations.length == 0) {
            throw new IllegalArgumentException("no evaluations given");
        }
        Broadcast<NetworkSnapshot<ComputationGraph>> snapshot = snapshot();
        try (JobDescriptions.Scope ui = JobDescriptions.step(sc, "ferrodl evaluate")) {
            Tuple2<Long, IEvaluation<?>[]> result = data
                    .mapPartitions(new IEvaluateFunction<>(snapshot, NetworkKind.GRAPH, outputIndex, evalBatchSize,
                            evalNumWorkers, emptyEvaluations))
                    .treeReduce((a, b) -> new Tuple2<>(a._1() + b._1(), IEvaluateFunction.merge(a._2(), b._2())));
            if (result._1() == 0) {
                throw new DL4JInvalidInputException("cannot evaluate: the RDD holds no examples");
            }
            T[] out = Arrays.copyOf(emptyEvaluations, emptyEvaluations.length);
            for (int i = 0; i < out.length; i++) {
                out[i] = (T) result._2()[i];
            }
            return out;
        } finally {
            snapshot.destroy();
        }
    }
}
