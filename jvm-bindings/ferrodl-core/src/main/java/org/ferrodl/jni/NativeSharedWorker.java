package org.ferrodl.jni;

/**
 * Raw JNI entry points of a gradient-sharing worker node: one authenticated connection to the
 * driver's relay shared by one or more network replicas. Used by the Spark module's
 * {@code SharedTrainingMaster} inside executor tasks; users never call it.
 *
 * <p>Thread-safety: the node and each replica are separate handles with separate native locks, so
 * replicas of one node may train concurrently from different threads.
 */
public final class NativeSharedWorker {
    static {
        NativeLoader.load();
    }

    private NativeSharedWorker() {
    }

    /**
     * Builds the replicas, connects to the relay and downloads the driver's current parameters
     * and counters and the fit's start updater state (the relay's snapshot).
     *
     * @param configJson the worker configuration (see {@code ferrodl_sharing::WorkerConfig})
     * @return {@code [nodeHandle, replicaHandle0, replicaHandle1, ...]}
     */
    public static native long[] connect(String configJson);

    /**
     * One training step of a replica (row-major: a {@code [N, C, T]} time series is N rows of C·T
     * values; masks as {@link NativeNetwork#fit}).
     *
     * @param featuresMask null, or {@code [N, T]} (padded steps count nowhere) / one value per example
     * @param featuresMaskCols its columns
     * @return the minibatch score before the update
     */
    public static native double fit(long replica, float[] features, int rows, int featureCols, float[] labels,
            int labelCols, float[] featuresMask, int featuresMaskCols, float[] labelsMask, int maskCols);

    /**
     * One training step of a replica of a computation graph (the worker was connected with
     * {@code "graph": true}); arrays as {@link NativeGraph#fit}: one row-major {@code rows × width}
     * array per network input and output, masks as {@code float[][]} with null entries plus their
     * column counts, or null for none.
     *
     * @return the minibatch score before the update
     */
    public static native double fitGraph(long replica, float[][] inputs, float[][] labels, int rows,
            float[][] featureMasks, int[] featureMaskCols, float[][] labelMasks, int[] labelMaskCols);

    /** @return the replica's report as JSON (minibatches, last score, counters, threshold state, steps) */
    public static native String replicaReport(long replica);

    /** @return a copy of the replica's parameters */
    public static native float[] replicaParams(long replica);

    /** @return a copy of the replica's updater state */
    public static native float[] replicaUpdaterState(long replica);

    /** @return threshold, sparsity and residual statistics of the replica's encoder, as JSON */
    public static native String debugStats(long replica);

    /**
     * Waits until the driver has applied every message this node sent, handing it the updater
     * state of each replica in {@code replicas} (the driver averages them into its network), then
     * closes the connection.
     *
     * @param node node handle
     * @param replicas replica handles whose updater states go to the driver, or null for none
     * @return the node's report as JSON (messages and bytes sent and received)
     */
    public static native String finish(long node, long[] replicas);

    /**
     * Tells the driver that this node's task made no progress (its stall watchdog); the driver
     * fails the fit with {@code report}, which should name the executor, host, partition and the
     * last thing the task did. Cut to 4096 bytes.
     */
    public static native void reportStall(long node, String report);

    /** @param node handle to release */
    public static native void destroyNode(long node);

    /** @param replica handle to release */
    public static native void destroyReplica(long replica);

    /**
     * @param statesJson a JSON array of per-worker threshold states
     * @return their average as JSON ({@code null} for an empty array)
     */
    public static native String averageThresholdStates(String statesJson);
}
