package org.ferrodl.spark.impl.common;

import java.io.IOException;
import java.io.ObjectStreamException;
import java.io.OutputStream;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.spark.api.java.function.Function;
import org.ferrodl.core.loader.impl.SerializedDataSetLoader;
import org.ferrodl.core.loader.impl.SerializedMultiDataSetLoader;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.jni.NativeSharedWorker;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.nn.api.RecurrentArrays;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.TrainingHook;

/**
 * The seam between the Spark code and the two network types: everything the training workers,
 * the snapshots and the evaluation functions need that differs between a
 * {@link MultiLayerNetwork} (trained on {@link DataSet}s) and a {@link ComputationGraph} (trained on
 * {@link MultiDataSet}s). One worker, one snapshot class and one set of evaluation functions serve
 * both through it; nothing else in the Spark code looks at the network type.
 *
 * <p>Exactly two instances exist, {@link #MULTI_LAYER} and {@link #GRAPH}; they travel with the
 * Spark closures and resolve to the same instance when deserialized.
 *
 * @param <N> the network type
 * @param <B> the minibatch type it trains on
 */
public abstract class NetworkKind<N extends NativeHandleOwner & Model, B> implements Serializable {
    private static final long serialVersionUID = 1L;

    /** {@link MultiLayerNetwork} on {@link DataSet}s. */
    public static final NetworkKind<MultiLayerNetwork, DataSet> MULTI_LAYER = new MultiLayer();
    /** {@link ComputationGraph} on {@link MultiDataSet}s. */
    public static final NetworkKind<ComputationGraph, MultiDataSet> GRAPH = new Graph();

    private NetworkKind() {
    }

    /** @return the network class's simple name, for messages */
    public abstract String networkName();

    // ---- the network ---------------------------------------------------------------------------

    /** @return the configuration JSON that {@link #create} rebuilds the network from */
    public abstract String configurationJson(N network);

    /** Builds and initializes a network from {@link #configurationJson} with the given parameters. */
    public abstract N create(String configurationJson, float[] params);

    public abstract INDArray updaterState(N network);

    public abstract void setUpdaterState(N network, INDArray state);

    public abstract int iterationCount(N network);

    public abstract int epochCount(N network);

    public abstract void setCounters(N network, int iteration, int epoch);

    /** @return values per example of each network input */
    public abstract long[] inputWidths(N network);

    /** @return values per example of each network output */
    public abstract long[] outputWidths(N network);

    // ---- minibatches -----------------------------------------------------------------------------

    /** One training iteration on {@code batch}. */
    public abstract void fit(N network, B batch);

    /** The score of {@code batch} in inference mode (losses + L1/L2). */
    public abstract double score(N network, B batch);

    /** The per-example scores of {@code batch} (a column vector). */
    public abstract INDArray scoreExamples(N network, B batch, boolean addRegularizationTerms);

    /** Inference outputs, one array per network output, for features (and masks, may be null). */
    public abstract INDArray[] output(N network, INDArray[] features, INDArray[] featureMasks);

    /** The layout of output {@code k}'s time-series arrays (NWC outputs are evaluated as NCW). */
    public abstract org.ferrodl.nn.conf.RNNFormat outputFormat(N network, int k);

    public abstract INDArray[] features(B batch);

    public abstract INDArray[] featureMasks(B batch);

    public abstract INDArray[] labels(B batch);

    public abstract INDArray[] labelMasks(B batch);

    public abstract int numExamples(B batch);

    /** The examples of {@code batches} in order, as one minibatch. */
    public abstract B merge(List<B> batches);

    /** Examples {@code from} (inclusive) to {@code to} (exclusive). */
    public abstract B range(B batch, int from, int to);

    /** @return the minibatch class's simple name, for messages ("DataSet", "MultiDataSet") */
    public abstract String batchName();

    /** Writes {@code batch} in its file format (what {@link #storedLoader} reads). */
    public abstract void save(B batch, OutputStream out) throws IOException;

    /** Reads files written by {@link #save} through Hadoop's FileSystem. */
    public abstract Function<String, B> storedLoader(HadoopConf conf);

    /** Calls the hook's overload for this minibatch type ({@code model}: the network, or a replica's view). */
    public abstract void preUpdate(TrainingHook hook, B batch, Model model);

    /** As {@link #preUpdate} after the update. */
    public abstract void postUpdate(TrainingHook hook, B batch, Model model);

    /** One gradient-sharing step of a native replica ({@link NativeSharedWorker}) on {@code batch}. */
    public abstract double sharedFit(long replica, B batch);

    /** Whether the engine must build a graph (not a layer chain) from the configuration JSON. */
    public abstract boolean isGraph();

    @Override
    public String toString() {
        return networkName();
    }

    // ---- the two kinds -------------------------------------------------------------------------

    private static final class MultiLayer extends NetworkKind<MultiLayerNetwork, DataSet> {
        private static final long serialVersionUID = 1L;

        private Object readResolve() throws ObjectStreamException {
            return MULTI_LAYER;
        }

        @Override
        public String networkName() {
            return "MultiLayerNetwork";
        }

        @Override
        public boolean isGraph() {
            return false;
        }

        @Override
        public org.ferrodl.nn.conf.RNNFormat outputFormat(MultiLayerNetwork network, int k) {
            return network.outputFormat();
        }

        @Override
        public String configurationJson(MultiLayerNetwork network) {
            return network.getLayerWiseConfigurations().toJson();
        }

        @Override
        public MultiLayerNetwork create(String json, float[] params) {
            MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerConfiguration.fromJson(json));
            net.init(Nd4j.create(params, 1, params.length), false);
            return net;
        }

        @Override
        public INDArray updaterState(MultiLayerNetwork network) {
            return network.getUpdaterState();
        }

        @Override
        public void setUpdaterState(MultiLayerNetwork network, INDArray state) {
            network.setUpdaterState(state);
        }

        @Override
        public int iterationCount(MultiLayerNetwork network) {
            return network.getIterationCount();
        }

        @Override
        public int epochCount(MultiLayerNetwork network) {
            return network.getEpochCount();
        }

        @Override
        public void setCounters(MultiLayerNetwork network, int iteration, int epoch) {
            network.setIterationCount(iteration);
            network.setEpochCount(epoch);
        }

        @Override
        public long[] inputWidths(MultiLayerNetwork network) {
            return new long[] {network.numInputs()};
        }

        @Override
        public long[] outputWidths(MultiLayerNetwork network) {
            return new long[] {network.numOutputs()};
        }

        @Override
        public void fit(MultiLayerNetwork network, DataSet batch) {
            network.fit(batch);
        }

        @Override
        public double score(MultiLayerNetwork network, DataSet batch) {
            return network.score(batch);
        }

        @Override
        public INDArray scoreExamples(MultiLayerNetwork network, DataSet batch, boolean addRegularizationTerms) {
            return network.scoreExamples(batch, addRegularizationTerms);
        }

        @Override
        public INDArray[] output(MultiLayerNetwork network, INDArray[] features, INDArray[] featureMasks) {
            if (features.length != 1) {
                throw new DL4JInvalidInputException("a MultiLayerNetwork takes one features array, got "
                        + features.length);
            }
            // the features mask keeps padded time steps out of the output, as in local evaluation
            return new INDArray[] {network.output(features[0], false,
                    featureMasks == null ? null : featureMasks[0], null)};
        }

        @Override
        public INDArray[] features(DataSet batch) {
            return new INDArray[] {batch.getFeatures()};
        }

        @Override
        public INDArray[] featureMasks(DataSet batch) {
            return batch.getFeaturesMaskArray() == null ? null : new INDArray[] {batch.getFeaturesMaskArray()};
        }

        @Override
        public INDArray[] labels(DataSet batch) {
            return new INDArray[] {batch.getLabels()};
        }

        @Override
        public INDArray[] labelMasks(DataSet batch) {
            return batch.getLabelsMaskArray() == null ? null : new INDArray[] {batch.getLabelsMaskArray()};
        }

        @Override
        public int numExamples(DataSet batch) {
            return batch.numExamples();
        }

        @Override
        public DataSet merge(List<DataSet> batches) {
            return batches.size() == 1 ? batches.get(0) : DataSet.merge(batches);
        }

        @Override
        public DataSet range(DataSet batch, int from, int to) {
            return batch.getRange(from, to);
        }

        @Override
        public String batchName() {
            return "DataSet";
        }

        @Override
        public void save(DataSet batch, OutputStream out) throws IOException {
            batch.save(out);
        }

        @Override
        public Function<String, DataSet> storedLoader(HadoopConf conf) {
            return LoadFunctions.loading(new SerializedDataSetLoader(), conf);
        }

        @Override
        public void preUpdate(TrainingHook hook, DataSet batch, Model model) {
            hook.preUpdate(batch, model);
        }

        @Override
        public void postUpdate(TrainingHook hook, DataSet batch, Model model) {
            hook.postUpdate(batch, model);
        }

        @Override
        public double sharedFit(long replica, DataSet batch) {
            INDArray f = batch.getFeatures();
            INDArray l = batch.getLabels();
            if (f == null || l == null || f.rank() < 2 || f.rank() > 3 || l.rank() < 2 || l.rank() > 3) {
                throw new DL4JInvalidInputException("a training DataSet must hold features and labels matrices "
                        + "[examples, columns] or time series [examples, size, timeSteps]");
            }
            int rows = Math.toIntExact(f.size(0));
            INDArray fm = batch.getFeaturesMaskArray();
            INDArray m = batch.getLabelsMaskArray();
            return NativeSharedWorker.fit(replica, NDArray.internalData(f), rows, RecurrentArrays.rowWidth(f, rows),
                    NDArray.internalData(l), RecurrentArrays.rowWidth(l, rows),
                    fm == null ? null : NDArray.internalData(fm), RecurrentArrays.maskCols(fm, "the features mask"),
                    m == null ? null : NDArray.internalData(m), RecurrentArrays.labelsMaskCols(m));
        }
    }

    private static final class Graph extends NetworkKind<ComputationGraph, MultiDataSet> {
        private static final long serialVersionUID = 1L;

        private Object readResolve() throws ObjectStreamException {
            return GRAPH;
        }

        @Override
        public String networkName() {
            return "ComputationGraph";
        }

        @Override
        public boolean isGraph() {
            return true;
        }

        @Override
        public org.ferrodl.nn.conf.RNNFormat outputFormat(ComputationGraph network, int k) {
            return network.outputFormat(k);
        }

        @Override
        public String configurationJson(ComputationGraph network) {
            return network.getConfiguration().toJson();
        }

        @Override
        public ComputationGraph create(String json, float[] params) {
            ComputationGraph net = new ComputationGraph(ComputationGraphConfiguration.fromJson(json));
            net.init(Nd4j.create(params, 1, params.length), false);
            return net;
        }

        @Override
        public INDArray updaterState(ComputationGraph network) {
            return network.getUpdaterState();
        }

        @Override
        public void setUpdaterState(ComputationGraph network, INDArray state) {
            network.setUpdaterState(state);
        }

        @Override
        public int iterationCount(ComputationGraph network) {
            return network.getIterationCount();
        }

        @Override
        public int epochCount(ComputationGraph network) {
            return network.getEpochCount();
        }

        @Override
        public void setCounters(ComputationGraph network, int iteration, int epoch) {
            network.setIterationCount(iteration);
            network.setEpochCount(epoch);
        }

        @Override
        public long[] inputWidths(ComputationGraph network) {
            return network.numInputs();
        }

        @Override
        public long[] outputWidths(ComputationGraph network) {
            return network.numOutputs();
        }

        @Override
        public void fit(ComputationGraph network, MultiDataSet batch) {
            network.fit(batch);
        }

        @Override
        public double score(ComputationGraph network, MultiDataSet batch) {
            return network.score(batch);
        }

        @Override
        public INDArray scoreExamples(ComputationGraph network, MultiDataSet batch, boolean addRegularizationTerms) {
            return network.scoreExamples(batch, addRegularizationTerms);
        }

        @Override
        public INDArray[] output(ComputationGraph network, INDArray[] features, INDArray[] featureMasks) {
            return network.output(false, features, featureMasks);
        }

        @Override
        public INDArray[] features(MultiDataSet batch) {
            return batch.getFeatures();
        }

        @Override
        public INDArray[] featureMasks(MultiDataSet batch) {
            return batch.getFeaturesMaskArrays();
        }

        @Override
        public INDArray[] labels(MultiDataSet batch) {
            return batch.getLabels();
        }

        @Override
        public INDArray[] labelMasks(MultiDataSet batch) {
            return batch.getLabelsMaskArrays();
        }

        @Override
        public int numExamples(MultiDataSet batch) {
            return batch.numExamples();
        }

        @Override
        public MultiDataSet merge(List<MultiDataSet> batches) {
            return batches.size() == 1 ? batches.get(0) : MultiDataSet.merge(batches);
        }

        @Override
        public MultiDataSet range(MultiDataSet batch, int from, int to) {
            return batch.getRange(from, to);
        }

        @Override
        public String batchName() {
            return "MultiDataSet";
        }

        @Override
        public void save(MultiDataSet batch, OutputStream out) throws IOException {
            batch.save(out);
        }

        @Override
        public Function<String, MultiDataSet> storedLoader(HadoopConf conf) {
            return LoadFunctions.loadingMulti(new SerializedMultiDataSetLoader(), conf);
        }

        @Override
        public void preUpdate(TrainingHook hook, MultiDataSet batch, Model model) {
            hook.preUpdate(batch, model);
        }

        @Override
        public void postUpdate(TrainingHook hook, MultiDataSet batch, Model model) {
            hook.postUpdate(batch, model);
        }

        @Override
        public double sharedFit(long replica, MultiDataSet batch) {
            INDArray[] f = Objects.requireNonNull(batch.getFeatures(), "features");
            INDArray[] l = Objects.requireNonNull(batch.getLabels(), "labels");
            int rows = batch.numExamples();
            float[][] fm = masks(batch.getFeaturesMaskArrays());
            float[][] lm = masks(batch.getLabelsMaskArrays());
            return NativeSharedWorker.fitGraph(replica, data(f), data(l), rows, fm,
                    fm == null ? null : maskCols(batch.getFeaturesMaskArrays(), false), lm,
                    lm == null ? null : maskCols(batch.getLabelsMaskArrays(), true));
        }

        private static float[][] data(INDArray[] arrays) {
            float[][] out = new float[arrays.length][];
            for (int k = 0; k < arrays.length; k++) {
                out[k] = arrays[k] == null ? null : NDArray.internalData(arrays[k]);
            }
            return out;
        }

        /** Masks as the engine takes them, or null when there is none at all. */
        private static float[][] masks(INDArray[] masks) {
            return masks == null || Arrays.stream(masks).allMatch(Objects::isNull) ? null : data(masks);
        }

        private static int[] maskCols(INDArray[] masks, boolean labels) {
            int[] cols = new int[masks.length];
            for (int k = 0; k < masks.length; k++) {
                INDArray m = masks[k];
                cols[k] = labels ? RecurrentArrays.labelsMaskCols(m) : RecurrentArrays.maskCols(m, "features mask " + k);
            }
            return cols;
        }
    }
}
