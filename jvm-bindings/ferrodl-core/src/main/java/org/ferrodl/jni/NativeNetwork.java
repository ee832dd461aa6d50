package org.ferrodl.jni;

/**
 * Raw JNI entry points of a native multi-layer network. Users should use
 * {@link org.ferrodl.nn.multilayer.MultiLayerNetwork}, which owns the handle.
 *
 * <p>A handle is an id in a typed registry on the native side: a stale, closed or forged handle
 * gives a {@link org.ferrodl.exception.NativeStateException}, never a crash. Arrays are copied across
 * the boundary. Thread-safety: every method may be called from any thread; calls on one handle are
 * serialized by a per-handle lock on the native side.
 *
 * <p>Matrices are flat row-major {@code float[]} with explicit row and column counts.
 */
public final class NativeNetwork {
    static {
        NativeLoader.load();
    }

    private NativeNetwork() {
    }

    /**
     * @param confJson a configuration as written by {@code MultiLayerConfiguration.toJson()}
     * @return a new handle, never 0
     */
    public static native long create(String confJson);

    /**
     * {@link #create} with the given parameters: the same network as {@code create} then
     * {@code setParams}, without drawing the seeded weights they replace.
     *
     * @param confJson a configuration as written by {@code MultiLayerConfiguration.toJson()}
     * @param params as many values as the network has parameters
     * @return a new handle, never 0
     */
    public static native long createWithParams(String confJson, float[] params);

    /** @param h handle to release; an unknown handle is an error */
    public static native void destroy(long h);

    /**
     * @param h handle
     * @return number of parameters
     */
    public static native long numParams(long h);

    /**
     * @param h handle
     * @return a copy of the flat parameter vector
     */
    public static native float[] params(long h);

    /**
     * @param h handle
     * @param p new flat parameter vector of length {@code numParams}
     */
    public static native void setParams(long h, float[] p);

    /**
     * @param h handle
     * @return a copy of the flat updater state
     */
    public static native float[] updaterState(long h);

    /**
     * @param h handle
     * @param s new flat updater state
     */
    public static native void setUpdaterState(long h, float[] s);

    /**
     * One training iteration on one minibatch.
     *
     * @param h handle
     * @param f features, {@code rows × fCols}
     * @param rows number of examples
     * @param fCols feature columns
     * @param l labels, {@code rows × lCols}
     * @param lCols label columns
     * @param fMask features mask or null: {@code [N, T]} for a recurrent input of T steps, or one
     *     value per example
     * @param fMaskCols features mask columns, ignored when {@code fMask} is null
     * @param lMask labels mask or null
     * @param lMaskCols mask columns (1 or lCols; T or nOut·T for a recurrent output), ignored
     *     when {@code lMask} is null
     * @return the score of the minibatch before the update (truncated BPTT: the last segment's)
     */
    public static native double fit(long h, float[] f, int rows, int fCols, float[] l, int lCols,
                                    float[] fMask, int fMaskCols, float[] lMask, int lMaskCols);

    /**
     * @param h handle
     * @param f features, {@code rows × fCols}
     * @param rows number of examples
     * @param fCols feature columns ({@code C·T} for a recurrent input, NCW)
     * @param fMask features mask or null ({@code [N, T]} or one value per example)
     * @param fMaskCols features mask columns
     * @param train training-mode forward pass
     * @return the output, {@code rows × nOut} ({@code rows × nOut·T} for a recurrent output)
     */
    public static native float[] output(long h, float[] f, int rows, int fCols, float[] fMask, int fMaskCols,
                                        boolean train);

    /**
     * The reference's {@code rnnTimeStep}: inference from the state the previous call left
     * (zeros at first), keeping the new state; {@code fit}/{@code output} never touch it.
     *
     * @param h handle
     * @param f features, {@code rows × C} (one step) or {@code rows × C·T}
     * @param rows number of examples
     * @param fCols feature columns
     * @return the output, {@code rows × nOut·T}
     */
    public static native float[] rnnTimeStep(long h, float[] f, int rows, int fCols);

    /** @param h handle; forgets every layer's {@code rnnTimeStep} state */
    public static native void rnnClearPreviousState(long h);

    /**
     * @param h handle
     * @param layer layer index
     * @return the names of the state layer {@code layer} keeps ({@code prevAct}, {@code prevMem}
     *     for LSTMs); empty for layers without recurrent state
     */
    public static native String[] rnnStateKeys(long h, int layer);

    /**
     * @param h handle
     * @param layer layer index
     * @param key a state key of {@link #rnnStateKeys}
     * @return the state, {@code rows × nOut}, or null when none is stored
     */
    public static native float[] rnnGetPreviousState(long h, int layer, String key);

    /**
     * @param h handle
     * @param layer layer index
     * @param key a state key of {@link #rnnStateKeys}
     * @param values {@code rows × nOut} values
     * @param rows number of examples
     */
    public static native void rnnSetPreviousState(long h, int layer, String key, float[] values, int rows);

    /**
     * @param h handle
     * @param f features
     * @param rows number of examples
     * @param fCols feature columns
     * @param l labels
     * @param lCols label columns
     * @param fMask features mask or null
     * @param fMaskCols features mask columns
     * @param lMask labels mask or null
     * @param lMaskCols mask columns
     * @return the score (mean loss plus regularization)
     */
    public static native double score(long h, float[] f, int rows, int fCols, float[] l, int lCols,
                                      float[] fMask, int fMaskCols, float[] lMask, int lMaskCols);

    /**
     * @param h handle
     * @return {@code [iteration, epoch]}
     */
    public static native long[] counters(long h);

    /**
     * @param h handle
     * @param iteration iteration counter
     * @param epoch epoch counter
     */
    public static native void setCounters(long h, long iteration, long epoch);

    /**
     * @param h handle
     * @return the configuration JSON with current counters
     */
    public static native String configurationJson(long h);

    /**
     * Per-example scores in inference mode (the network does not change).
     *
     * @param h handle
     * @param f features, {@code rows × fCols}
     * @param rows number of examples
     * @param fCols feature columns
     * @param l labels, {@code rows × lCols}
     * @param lCols label columns
     * @param fMask features mask or null
     * @param fMaskCols features mask columns
     * @param lMask labels mask or null
     * @param lMaskCols mask columns (1 or lCols), ignored when {@code lMask} is null
     * @param includeRegularization whether to add the whole L1/L2 term to every example's score
     * @return {@code rows} scores: each example's loss (summed over its unmasked steps for a
     *     recurrent output, plus the regularization term)
     */
    public static native double[] scoreExamples(long h, float[] f, int rows, int fCols, float[] l, int lCols,
                                                float[] fMask, int fMaskCols, float[] lMask, int lMaskCols,
                                                boolean includeRegularization);

    /**
     * @param h handle
     * @return a JSON array with one object per parameter block, in {@code params()} order:
     *     {@code {"key":"0_W","offset":0,"length":6,"shape":[2,3]}}
     */
    public static native String paramTable(long h);

    /**
     * @param h handle
     * @return a JSON array with one object per layer: {@code index}, {@code type},
     *     {@code innerType} (the wrapped type of a FrozenLayer, else the type), {@code name} (or
     *     null), {@code frozen}, {@code nIn}/{@code nOut} (configured values or null),
     *     {@code inputShape}/{@code outputShape} (per-example arrays: {@code [n]}, {@code [C,H,W]} or
     *     {@code [C,L]}), {@code numParams}, {@code params} ({@code [{"name":"W","shape":[..]}, ..]}),
     *     {@code activation} (or null); the last layer also {@code lossFunction} and
     *     {@code outputActivation}
     */
    public static native String layerInfo(long h);

    /**
     * @param h handle
     * @param layer layer index
     * @return the current learning rate of the layer's weights (schedules applied at the current
     *     counters), NaN for a layer without parameters
     */
    public static native double learningRate(long h, int layer);
}
