package org.ferrodl.spark.impl.multilayer;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaDoubleRDD;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.mllib.linalg.Matrix;
import org.apache.spark.mllib.linalg.Vector;
import org.apache.spark.mllib.regression.LabeledPoint;
import org.apache.spark.rdd.RDD;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.core.loader.impl.SerializedDataSetLoader;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
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
import org.ferrodl.spark.util.MLLibUtil;
import scala.Tuple2;

/**
 * Trains and evaluates a {@link MultiLayerNetwork} on Spark. Training is delegated to the
 * {@link TrainingMaster}; evaluation, scoring and inference run one network per partition from a
 * broadcast snapshot of the driver's network. The driver's network is updated in place by
 * {@code fit}.
 *
 * <p>Evaluation workers: at most {@link #getDefaultEvaluationWorkers()} (or the number given to
 * {@code doEvaluation}) networks evaluate at once in one executor JVM; further evaluation tasks
 * of that executor wait for a free worker. Not thread-safe: one fit or evaluation at a time per
 * instance.
 */
public class SparkDl4jMultiLayer extends BaseSparkNetwork<MultiLayerNetwork, DataSet> {
    /** Default minibatch size of evaluation and scoring in each worker. */
    public static final int DEFAULT_EVAL_SCORE_BATCH_SIZE = 64;
    /** Default number of evaluation workers per executor. */
    public static final int DEFAULT_EVAL_WORKERS = 4;
    /** Threshold steps of {@link #evaluateROC(JavaRDD)} and {@link #evaluateROCMultiClass(JavaRDD)}. */
    public static final int DEFAULT_ROC_THRESHOLD_STEPS = 32;


    public SparkDl4jMultiLayer(SparkContext sparkContext, MultiLayerConfiguration conf,
                               TrainingMaster<?, ?> trainingMaster) {
        this(new JavaSparkContext(sparkContext), initNetwork(conf), trainingMaster);
    }

    public SparkDl4jMultiLayer(JavaSparkContext sc, MultiLayerConfiguration conf, TrainingMaster<?, ?> trainingMaster) {
        this(sc, initNetwork(conf), trainingMaster);
    }

    public SparkDl4jMultiLayer(SparkContext sparkContext, MultiLayerNetwork network,
                               TrainingMaster<?, ?> trainingMaster) {
        this(new JavaSparkContext(sparkContext), network, trainingMaster);
    }

    /**
     * @param sc the Spark context
     * @param network the network (initialized)
     * @param trainingMaster needed for training; may be null when the instance only evaluates or
     *     predicts
     */
    public SparkDl4jMultiLayer(JavaSparkContext sc, MultiLayerNetwork network, TrainingMaster<?, ?> trainingMaster) {
        super(sc, network, trainingMaster, DEFAULT_EVAL_WORKERS);
    }

    /** The prediction constructor: evaluation, scoring and inference only (no training master). */
    public SparkDl4jMultiLayer(JavaSparkContext sc, MultiLayerNetwork network) {
        this(sc, network, null);
    }

    private static MultiLayerNetwork initNetwork(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(Objects.requireNonNull(conf, "configuration"));
        net.init();
        return net;
    }

    @Override
    public NetworkKind<MultiLayerNetwork, DataSet> getNetworkKind() {
        return NetworkKind.MULTI_LAYER;
    }

    // ------------------------------------------------------------------------------- prediction

    /** Output of the driver's network for {@code features} ({@code rows × nIn}), as a dense matrix. */
    public Matrix predict(Matrix features) {
        checkWidth(features.numCols(), "feature matrix");
        return MLLibUtil.toMatrix(network.output(MLLibUtil.toMatrix(features), false));
    }

    /** Output of the driver's network for one example. */
    public Vector predict(Vector point) {
        checkWidth(point.size(), "feature vector");
        return MLLibUtil.toVector(network.output(MLLibUtil.toVector(point), false));
    }

    private void checkWidth(int width, String what) {
        if (width != network.numInputs()) {
            throw new DL4JInvalidInputException("the " + what + " has " + width + " columns but the network takes "
                    + network.numInputs() + " inputs");
        }
    }

    // ---------------------------------------------------------------------------------- training

    /** Fits the network on {@code trainingData}; equivalent to {@code fit(trainingData.toJavaRDD())}. */
    public MultiLayerNetwork fit(RDD<DataSet> trainingData) {
        return fit(trainingData.toJavaRDD());
    }

    /** Fits the network on {@code trainingData} (one pass) and returns the updated driver network. */
    public MultiLayerNetwork fit(JavaRDD<DataSet> trainingData) {
        Objects.requireNonNull(trainingData, "trainingData");
        TrainingMaster<?, ?> master = requireMaster();
        try (JobDescriptions.Scope ui = JobDescriptions.fit(sc, network.getEpochCount(),
                master.getClass().getSimpleName())) {
            master.executeTraining(this, trainingData);
        }
        return network;
    }

    /**
     * Fits on a directory of DataSet files written by {@link DataSet#save} (any Hadoop FileSystem
     * URI: {@code hdfs://}, {@code file:}, ...). The files directly in the directory are used, in
     * name order; names starting with {@code _} or {@code .} are skipped.
     */
    public MultiLayerNetwork fit(String path) {
        List<String> files = LoadFunctions.listFiles(sc, path);
        return fitPaths(sc.parallelize(files, Math.min(files.size(), Math.max(1, sc.defaultParallelism()))));
    }

    /** @deprecated use {@link #fit(String)}; {@code minPartitions} sets the partitions of the path list. */
    @Deprecated
    public MultiLayerNetwork fit(String path, int minPartitions) {
        if (minPartitions < 1) {
            throw new IllegalArgumentException("minPartitions must be >= 1, got " + minPartitions);
        }
        return fitPaths(sc.parallelize(LoadFunctions.listFiles(sc, path), minPartitions));
    }

    /** Fits on the DataSet files at {@code paths} (read with {@link SerializedDataSetLoader}). */
    public MultiLayerNetwork fitPaths(JavaRDD<String> paths) {
        return fitPaths(paths, new SerializedDataSetLoader());
    }

    /** Fits on the files at {@code paths}, each read with {@code loader} on the executors. */
    public MultiLayerNetwork fitPaths(JavaRDD<String> paths, DataSetLoader loader) {
        Objects.requireNonNull(paths, "paths");
        Objects.requireNonNull(loader, "loader");
        TrainingMaster<?, ?> master = requireMaster();
        try (JobDescriptions.Scope ui = JobDescriptions.fit(sc, network.getEpochCount(),
                master.getClass().getSimpleName())) {
            master.executeTrainingPaths(this, null, paths, loader, null);
        }
        return network;
    }

    /**
     * Fits a classifier on MLlib labeled points: labels are class indices {@code 0..nOut-1}
     * (one-hot encoded here); points are grouped into DataSets of the training master's
     * {@code rddDataSetNumExamples}.
     */
    public MultiLayerNetwork fitLabeledPoint(JavaRDD<LabeledPoint> rdd) {
        checkPoints(rdd);
        return fit(MLLibUtil.fromLabeledPoint(rdd, network.numOutputs(), requireMaster().getRddDataSetNumExamples()));
    }

    /**
     * Fits a regression network with one output on MLlib labeled points whose labels are the
     * continuous targets.
     */
    public MultiLayerNetwork fitContinuousLabeledPoint(JavaRDD<LabeledPoint> rdd) {
        if (network.numOutputs() != 1) {
            throw new DL4JInvalidInputException("fitContinuousLabeledPoint needs a network with one output (a "
                    + "LabeledPoint has one label), this one has " + network.numOutputs());
        }
        checkPoints(rdd);
        return fit(MLLibUtil.fromContinuousLabeledPoint(rdd, requireMaster().getRddDataSetNumExamples()));
    }

    private void checkPoints(JavaRDD<LabeledPoint> rdd) {
        Objects.requireNonNull(rdd, "rdd");
        List<LabeledPoint> first = rdd.take(1);
        if (first.isEmpty()) {
            throw new DL4JInvalidInputException("cannot fit: the LabeledPoint RDD is empty");
        }
        checkWidth(first.get(0).features().size(), "labeled points' feature vector");
    }

    // ------------------------------------------------------------------------------ evaluation

    /** Classification evaluation of {@code data} (minibatches of {@value #DEFAULT_EVAL_SCORE_BATCH_SIZE}). */
    public Evaluation evaluate(JavaRDD<DataSet> data) {
        return evaluate(data, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    public Evaluation evaluate(RDD<DataSet> data) {
        return evaluate(data.toJavaRDD());
    }

    /** Classification evaluation with minibatches of at most {@code evalBatchSize}. */
    public Evaluation evaluate(JavaRDD<DataSet> data, int evalBatchSize) {
        return doEvaluation(data, evalBatchSize, new Evaluation())[0];
    }

    /** Classification evaluation whose classes are named {@code labelsList}. */
    public Evaluation evaluate(JavaRDD<DataSet> data, List<String> labelsList) {
        return evaluate(data, labelsList, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** Classification evaluation whose classes are named {@code labelsList}, with the given minibatch size. */
    public Evaluation evaluate(JavaRDD<DataSet> data, List<String> labelsList, int evalBatchSize) {
        return doEvaluation(data, evalBatchSize, new Evaluation(labelsList))[0];
    }

    /** Classification evaluation of the DataSet files in directory {@code path}, read with {@code loader}. */
    public Evaluation evaluate(String path, DataSetLoader loader) {
        return evaluate(path, DEFAULT_EVAL_SCORE_BATCH_SIZE, loader);
    }

    /** Classification evaluation of the DataSet files in directory {@code path}, read with {@code loader}. */
    public Evaluation evaluate(String path, int batchSize, DataSetLoader loader) {
        List<String> files = LoadFunctions.listFiles(sc, path);
        JavaRDD<String> paths = sc.parallelize(files, Math.min(files.size(), Math.max(1, sc.defaultParallelism())));
        return doEvaluation(paths, getDefaultEvaluationWorkers(), batchSize, loader, new Evaluation())[0];
    }

    /** Regression evaluation of {@code data}. */
    public RegressionEvaluation evaluateRegression(JavaRDD<DataSet> data) {
        return evaluateRegression(data, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** Regression evaluation of {@code data} with minibatches of at most {@code minibatchSize}. */
    public RegressionEvaluation evaluateRegression(JavaRDD<DataSet> data, int minibatchSize) {
        return doEvaluation(data, minibatchSize, new RegressionEvaluation(network.numOutputs()))[0];
    }

    /** Thresholded ROC ({@value #DEFAULT_ROC_THRESHOLD_STEPS} steps) of a binary classifier. */
    public ROC evaluateROC(JavaRDD<DataSet> data) {
        return evaluateROC(data, DEFAULT_ROC_THRESHOLD_STEPS, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** ROC of a binary classifier ({@code thresholdSteps} 0: exact). */
    public ROC evaluateROC(JavaRDD<DataSet> data, int thresholdSteps, int evaluationMinibatchSize) {
        return doEvaluation(data, evaluationMinibatchSize, new ROC(thresholdSteps))[0];
    }

    /** Thresholded one-vs-all ROC ({@value #DEFAULT_ROC_THRESHOLD_STEPS} steps) of a multi-class classifier. */
    public ROCMultiClass evaluateROCMultiClass(JavaRDD<DataSet> data) {
        return evaluateROCMultiClass(data, DEFAULT_ROC_THRESHOLD_STEPS, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** One-vs-all ROC of a multi-class classifier ({@code thresholdSteps} 0: exact). */
    public ROCMultiClass evaluateROCMultiClass(JavaRDD<DataSet> data, int thresholdSteps, int evaluationMinibatchSize) {
        return doEvaluation(data, evaluationMinibatchSize, new ROCMultiClass(thresholdSteps))[0];
    }

    /**
     * Runs every given (empty) evaluation over {@code data} in one pass, with the default number
     * of evaluation workers, and returns them filled.
     */
    @SafeVarargs
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<DataSet> data, int evalBatchSize,
                                                            T... emptyEvaluations) {
        return doEvaluation(data, getDefaultEvaluationWorkers(), evalBatchSize, emptyEvaluations);
    }

    /**
     * Runs every given (empty) evaluation over {@code data} in one pass with at most
     * {@code evalNumWorkers} evaluating networks per executor, and returns them filled (the given
     * objects are not modified).
     *
     * @throws DL4JInvalidInputException when {@code data} holds no example
     */
    @SafeVarargs
    @SuppressWarnings("unchecked")
    public final <T extends IEvaluation<?>> T[] doEvaluation(JavaRDD<DataSet> data, int evalNumWorkers,
                                                            int evalBatchSize, T... emptyEvaluations) {
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
        Broadcast<NetworkSnapshot<MultiLayerNetwork>> snapshot = snapshot();
        try (JobDescriptions.Scope ui = JobDescriptions.step(sc, "ferrodl evaluate")) {
            Tuple2<Long, IEvaluation<?>[]> result = data
                    .mapPartitions(new IEvaluateFunction<>(snapshot, NetworkKind.MULTI_LAYER, 0, evalBatchSize,
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

    // --------------------------------------------------------------------------------- scoring

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
        checkBatch(minibatchSize);
        Broadcast<NetworkSnapshot<MultiLayerNetwork>> snapshot = snapshot();
        try (JobDescriptions.Scope ui = JobDescriptions.step(sc, "ferrodl score")) {
            Tuple2<Double, Long> total = data.mapPartitions(new ScoreFunction<>(snapshot, NetworkKind.MULTI_LAYER,
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

    /** {@code RDD<DataSet>} overload of {@link #scoreExamples(JavaRDD, boolean)}. */
    public JavaDoubleRDD scoreExamples(RDD<DataSet> data, boolean includeRegularizationTerms) {
        return scoreExamples(data.toJavaRDD(), includeRegularizationTerms);
    }

    /**
     * The score of every example, in the order of the RDD, with minibatches of
     * {@value #DEFAULT_EVAL_SCORE_BATCH_SIZE}; equal to the local
     * {@link MultiLayerNetwork#scoreExamples(DataSet, boolean)} of each example.
     */
    public JavaDoubleRDD scoreExamples(JavaRDD<DataSet> data, boolean includeRegularizationTerms) {
        return scoreExamples(data, includeRegularizationTerms, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /** {@code RDD<DataSet>} overload of {@link #scoreExamples(JavaRDD, boolean, int)}. */
    public JavaDoubleRDD scoreExamples(RDD<DataSet> data, boolean includeRegularizationTerms, int batchSize) {
        return scoreExamples(data.toJavaRDD(), includeRegularizationTerms, batchSize);
    }

    /**
     * The score of every example, in the order of the RDD, computed in minibatches of at most
     * {@code batchSize}. The result is lazy: it uses a snapshot of the network taken now, which
     * stays valid for later actions on it.
     */
    public JavaDoubleRDD scoreExamples(JavaRDD<DataSet> data, boolean includeRegularizationTerms, int batchSize) {
        checkBatch(batchSize);
        return data.mapPartitionsToDouble(new ScoreExamplesFunction<>(snapshot(), NetworkKind.MULTI_LAYER,
                includeRegularizationTerms, batchSize));
    }

    /**
     * One score per key, with minibatches of {@value #DEFAULT_EVAL_SCORE_BATCH_SIZE}; every DataSet
     * must hold exactly one example.
     */
    public <K> JavaPairRDD<K, Double> scoreExamples(JavaPairRDD<K, DataSet> data, boolean includeRegularizationTerms) {
        return scoreExamples(data, includeRegularizationTerms, DEFAULT_EVAL_SCORE_BATCH_SIZE);
    }

    /**
     * One score per key, computed in minibatches of at most {@code batchSize}; every DataSet must
     * hold exactly one example (otherwise the job fails naming the key). Lazy, like
     * {@link #scoreExamples(JavaRDD, boolean, int)}.
     */
    public <K> JavaPairRDD<K, Double> scoreExamples(JavaPairRDD<K, DataSet> data, boolean includeRegularizationTerms,
                                                    int batchSize) {
        checkBatch(batchSize);
        return data.mapPartitionsToPair(new ScoreExamplesWithKeyFunction<>(snapshot(), NetworkKind.MULTI_LAYER,
                includeRegularizationTerms, batchSize));
    }

    /**
     * The network output for every key: each value is one example's features ({@code [nIn]} or
     * {@code [1, nIn]}), each result a {@code [1, nOut]} row. Lazy, like
     * {@link #scoreExamples(JavaRDD, boolean, int)}.
     */
    public <K> JavaPairRDD<K, INDArray> feedForwardWithKey(JavaPairRDD<K, INDArray> featuresData, int batchSize) {
        checkBatch(batchSize);
        return featuresData
                .mapValues(f -> new Tuple2<INDArray[], INDArray[]>(new INDArray[] {f}, null))
                .mapPartitionsToPair(new FeedForwardWithKeyFunction<>(snapshot(), NetworkKind.MULTI_LAYER, batchSize))
                .mapValues(out -> out[0]);
    }

    /** A broadcast snapshot of the driver's network (no updater state) for evaluation and inference. */
    private Broadcast<NetworkSnapshot<MultiLayerNetwork>> snapshot() {
        return sc.broadcast(NetworkSnapshot.of(NetworkKind.MULTI_LAYER, network, false));
    }
}
