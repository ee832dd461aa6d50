package org.ferrodl.spark.api;

import java.io.Serializable;
import org.ferrodl.common.primitives.Pair;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.NetworkKind;

/**
 * The executor side of a training master, with the reference's methods: a serializable object
 * that a master's {@code getWorkerInstance(network)} returns and that is used on an executor as
 * the reference's {@code ExecuteWorkerFlatMap} uses it —
 * <pre>{@code
 * MultiLayerNetwork net = worker.getInitialModel();          // getInitialModelGraph() for a graph
 * while (it.hasNext()) {
 *     R r = worker.processMinibatch(it.next(), net, !it.hasNext());
 *     if (r != null) return r;                                // the task's result
 * }
 * return worker.getFinalResult(net);                         // getFinalResultNoData() without data
 * }</pre>
 * One worker class per master serves both network types through {@link NetworkKind}; the methods
 * of the other network type refuse with a message naming the one to call. The masters run their
 * own fits through the same worker classes. The type a master's {@link TrainingMaster} signature
 * names as {@code W}.
 *
 * @param <R> the result it returns
 */
public interface TrainingWorker<R extends TrainingResult> extends Serializable {

    /** @return the network type (and minibatch type) this worker trains */
    NetworkKind<?, ?> getNetworkKind();

    /** Removes a hook run around each minibatch update (the first equal one). */
    void removeHook(TrainingHook trainingHook);

    /** Adds a hook run around each minibatch update. */
    void addHook(TrainingHook trainingHook);

    /** The network to train on this executor (a MultiLayerNetwork worker); the caller closes it. */
    MultiLayerNetwork getInitialModel();

    /** The graph to train on this executor (a ComputationGraph worker); the caller closes it. */
    ComputationGraph getInitialModelGraph();

    /**
     * Fits one minibatch.
     *
     * @param isLast true when no more data follows for this task
     * @return null, or the task's result when training should end here
     */
    R processMinibatch(DataSet dataSet, MultiLayerNetwork network, boolean isLast);

    /** As {@link #processMinibatch(DataSet, MultiLayerNetwork, boolean)} for a one-input, one-output graph. */
    R processMinibatch(DataSet dataSet, ComputationGraph graph, boolean isLast);

    /** As {@link #processMinibatch(DataSet, MultiLayerNetwork, boolean)} for a graph. */
    R processMinibatch(MultiDataSet dataSet, ComputationGraph graph, boolean isLast);

    /** As {@link #processMinibatch(DataSet, MultiLayerNetwork, boolean)}, with this task's statistics. */
    Pair<R, SparkTrainingStats> processMinibatchWithStats(DataSet dataSet, MultiLayerNetwork network, boolean isLast);

    /** As {@link #processMinibatch(DataSet, ComputationGraph, boolean)}, with this task's statistics. */
    Pair<R, SparkTrainingStats> processMinibatchWithStats(DataSet dataSet, ComputationGraph graph, boolean isLast);

    /** As {@link #processMinibatch(MultiDataSet, ComputationGraph, boolean)}, with this task's statistics. */
    Pair<R, SparkTrainingStats> processMinibatchWithStats(MultiDataSet dataSet, ComputationGraph graph,
                                                          boolean isLast);

    /** The result to return to the driver for {@code network} as it is now. */
    R getFinalResult(MultiLayerNetwork network);

    /** The result to return to the driver for {@code graph} as it is now. */
    R getFinalResult(ComputationGraph graph);

    /** The result of a task that had no data. */
    R getFinalResultNoData();

    /** As {@link #getFinalResultNoData()}, with this task's statistics (null when none are collected). */
    Pair<R, SparkTrainingStats> getFinalResultNoDataWithStats();

    /** As {@link #getFinalResult(MultiLayerNetwork)}, with this task's statistics (null when none are collected). */
    Pair<R, SparkTrainingStats> getFinalResultWithStats(MultiLayerNetwork network);

    /** As {@link #getFinalResult(ComputationGraph)}, with this task's statistics (null when none are collected). */
    Pair<R, SparkTrainingStats> getFinalResultWithStats(ComputationGraph graph);

    /** Minibatch size, examples per RDD object, prefetching, statistics: see {@link WorkerConfiguration}. */
    WorkerConfiguration getDataConfiguration();

    /** An id of the training instance this worker belongs to (0 where a master does not use one). */
    long getInstanceId();
}
