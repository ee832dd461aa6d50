package org.ferrodl.spark.api;

import java.io.Serializable;
import java.util.Collection;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.core.loader.MultiDataSetLoader;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;

/**
 * A strategy for distributed training of a {@link SparkDl4jMultiLayer} or a
 * {@link SparkComputationGraph}: how data is split among workers and how their results are
 * combined. Implementations are serializable configuration objects; all per-fit state lives inside
 * the {@code executeTraining} calls so two fits never share it. Both network types go through the
 * same code of a master (its worker is generic over {@link org.ferrodl.spark.impl.common.NetworkKind}).
 *
 * @param <R> what its worker tasks return to the driver
 * @param <W> its worker (the executor side)
 */
public interface TrainingMaster<R extends TrainingResult, W extends TrainingWorker<R>> extends Serializable {

    /** Removes a hook run on the workers around each minibatch update (the first equal one). */
    void removeHook(TrainingHook trainingHook);

    /** Adds a hook run on the workers around each minibatch update ({@link TrainingHook}). */
    void addHook(TrainingHook trainingHook);

    /**
     * A worker for {@code network} as it is now (its parameters and updater state broadcast), with
     * this master's settings, hooks and listeners, to run on executors as {@link TrainingWorker}
     * describes. Each call broadcasts a new snapshot.
     */
    W getWorkerInstance(SparkDl4jMultiLayer network);

    /** As {@link #getWorkerInstance(SparkDl4jMultiLayer)} for a graph. */
    W getWorkerInstance(SparkComputationGraph graph);

    /**
     * Listeners attached on the workers (in addition to those of the network wrapper, which are
     * attached first); they must be serializable. Not part of the master's JSON.
     */
    void setListeners(Collection<TrainingListener> listeners);

    /** Trains {@code network}'s model on {@code trainingData}, updating the network in place. */
    void executeTraining(SparkDl4jMultiLayer network, JavaRDD<DataSet> trainingData);

    /**
     * Trains a graph with one input and one output on DataSets (each becomes a one-array
     * MultiDataSet, as {@link MultiDataSet#fromDataSet}).
     */
    void executeTraining(SparkComputationGraph graph, JavaRDD<DataSet> trainingData);

    /** Trains {@code graph}'s model on {@code trainingData}, updating the graph in place. */
    void executeTrainingMDS(SparkComputationGraph graph, JavaRDD<MultiDataSet> trainingData);

    /**
     * Trains on data stored at {@code trainingDataPaths}, read on the executors: a network with
     * {@code dsLoader}, or a graph with {@code mdsLoader} (or, when that is null, with
     * {@code dsLoader} and each DataSet as a one-array MultiDataSet). Exactly one of
     * {@code network} and {@code graph} is given.
     */
    void executeTrainingPaths(SparkDl4jMultiLayer network, SparkComputationGraph graph,
                              JavaRDD<String> trainingDataPaths, DataSetLoader dsLoader,
                              MultiDataSetLoader mdsLoader);

    /**
     * Examples in each DataSet object of the training RDD, as configured; used to group MLlib
     * labeled points into DataSets of that size ({@code fitLabeledPoint}). Default 1.
     */
    default int getRddDataSetNumExamples() {
        return 1;
    }

    /**
     * Deletes temporary data this master keeps between fits (an export of the training data);
     * masters that keep none return true at once.
     *
     * @return true when there was nothing to delete or it was deleted
     */
    default boolean deleteTempFiles(JavaSparkContext sc) {
        return true;
    }

    /** @see #deleteTempFiles(JavaSparkContext) */
    default boolean deleteTempFiles(SparkContext sc) {
        return deleteTempFiles(sc == null ? null : new JavaSparkContext(sc));
    }

    /** This master's configuration as JSON. */
    String toJson();

    /** This master's configuration as YAML. */
    String toYaml();

    /** Enables or disables the collection of training statistics. */
    void setCollectTrainingStats(boolean collectTrainingStats);

    /** Whether training statistics are collected. */
    boolean getIsCollectTrainingStats();

    /** Statistics of the last fit, or {@code null} when collection is disabled. */
    SparkTrainingStats getTrainingStats();
}
