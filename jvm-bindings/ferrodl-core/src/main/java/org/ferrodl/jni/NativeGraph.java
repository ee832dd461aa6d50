package org.ferrodl.jni;

/**
 * The native computation graph behind a handle (docs/ARCHITECTURE.md §5). Used by
 * {@code org.ferrodl.nn.graph.ComputationGraph}; not meant for user code.
 *
 * <p>Arrays cross as {@code float[][]}: one row-major {@code rows × width} array per network input
 * ({@code inputs}, in {@code networkInputs} order) or output ({@code labels}, in
 * {@code networkOutputs} order). Masks are a {@code float[][]} with one entry per input/output
 * (null where there is none) plus an {@code int[]} of their column counts, or null for no masks at
 * all. Errors are the exceptions of the error table (ARCHITECTURE.md §6) naming the input or output.
 *
 * <p>Thread-safety: calls on one handle are serialized by the engine; different handles are
 * independent.
 */
public final class NativeGraph {
    static {
        NativeLoader.load();
    }

    private NativeGraph() {
    }

    /** @return a handle (never 0) for a graph built from a ComputationGraphConfiguration JSON */
    public static native long create(String confJson);

    /**
     * {@link #create} with the given parameters (as many as the graph has): the same graph as
     * {@code create} then {@code setParams}, without drawing the seeded weights they replace.
     */
    public static native long createWithParams(String confJson, float[] params);

    public static native void destroy(long handle);

    public static native long numParams(long handle);

    public static native float[] params(long handle);

    public static native void setParams(long handle, float[] params);

    /** @return the gradient of the last computeGradientAndScore (or the last update after fit) */
    public static native float[] gradient(long handle);

    public static native float[] updaterState(long handle);

    public static native void setUpdaterState(long handle, float[] state);

    /** One training iteration; returns the score before the update. */
    public static native double fit(long handle, float[][] inputs, float[][] labels, int rows,
            float[][] featureMasks, int[] featureMaskCols, float[][] labelMasks, int[] labelMaskCols);

    /** Score (sum of output losses + L1/L2) in inference mode. */
    public static native double score(long handle, float[][] inputs, float[][] labels, int rows,
            float[][] featureMasks, int[] featureMaskCols, float[][] labelMasks, int[] labelMaskCols);

    /** Forward + backward in training mode without updating; the gradient via {@link #gradient}. */
    public static native double computeGradientAndScore(long handle, float[][] inputs, float[][] labels,
            int rows, float[][] featureMasks, int[] featureMaskCols, float[][] labelMasks, int[] labelMaskCols);

    /** Per-example scores (sum over outputs), plus the whole L1/L2 term on each when asked. */
    public static native double[] scoreExamples(long handle, float[][] inputs, float[][] labels, int rows,
            float[][] featureMasks, int[] featureMaskCols, float[][] labelMasks, int[] labelMaskCols,
            boolean includeRegularization);

    /** @return one {@code rows × nOut} array per network output (activated) */
    public static native float[][] output(long handle, float[][] inputs, int rows, boolean train,
            float[][] featureMasks, int[] featureMaskCols);

    /** @return every vertex's activation, in configuration order (output layers activated) */
    public static native float[][] feedForward(long handle, float[][] inputs, int rows, boolean train,
            float[][] featureMasks, int[] featureMaskCols);

    /** @return {@code [iteration, epoch]} */
    public static native long[] counters(long handle);

    public static native void setCounters(long handle, long iteration, long epoch);

    public static native String configurationJson(long handle);

    /** @return JSON array in {@code params()} order: {@code {"key":"dense1_W","offset","length","shape"}} */
    public static native String paramTable(long handle);

    /**
     * @return JSON: {@code inputs} ({@code name}, {@code width}), {@code outputs} ({@code name},
     *     {@code nOut}, {@code activation}, {@code lossFunction}), {@code order} (execution order),
     *     {@code vertices} in configuration order ({@code name}, {@code vertexType}, {@code type},
     *     {@code inputs}, {@code frozen}, {@code nIn}, {@code nOut}, {@code inputShapes},
     *     {@code outputShape}, {@code numParams}, {@code params}, {@code activation})
     */
    public static native String vertexInfo(long handle);

    /** @return the weights' learning rate of a vertex at the current counters; NaN without parameters */
    public static native double learningRate(long handle, String vertexName);

    /**
     * The reference's {@code rnnTimeStep}: outputs from the state the previous call left (zeros
     * at first), keeping the new state; {@code fit}/{@code output} never touch it.
     *
     * @return one array per network output
     */
    public static native float[][] rnnTimeStep(long handle, float[][] inputs, int rows);

    /** Forgets every layer's {@code rnnTimeStep} state. */
    public static native void rnnClearPreviousState(long handle);

    /** @return the state keys of a layer vertex ({@code prevAct}, {@code prevMem} for LSTMs); empty if none */
    public static native String[] rnnStateKeys(long handle, String vertexName);

    /** @return a layer vertex's state under {@code key} ({@code rows × nOut}), or null when none is stored */
    public static native float[] rnnGetPreviousState(long handle, String vertexName, String key);

    /** Sets a layer vertex's state under {@code key} to {@code rows × nOut} values. */
    public static native void rnnSetPreviousState(long handle, String vertexName, String key, float[] values,
                                                  int rows);
}
