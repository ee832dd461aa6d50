package org.ferrodl.jni;

/**
 * Build information of the native library, and a hook for testing the panic barrier.
 *
 * <p>Thread-safety: both methods are stateless and may be called from any thread.
 */
public final class NativeInfo {
    static {
        NativeLoader.load();
    }

    private NativeInfo() {
    }

    /**
     * @return a JSON object with {@code version}, {@code gitSha}, {@code target}, {@code profile} and
     *     {@code features} of the loaded native library
     */
    public static native String buildInfo();

    /**
     * Panics inside the native boundary on purpose. The panic is caught there and thrown as a
     * {@link org.ferrodl.exception.NativePanicException} carrying {@code message}. For tests only.
     *
     * @param message the panic message
     */
    public static native void panicForTest(String message);

    /**
     * Sets how many threads the engine's numeric kernels use in this process (GEMM blocks).
     * Spark workers call it with the cores of their task ({@code spark.task.cpus}) so that an
     * executor running several tasks does not oversubscribe its cores.
     *
     * @param n threads; {@code <= 0} restores the default (the cores available to the process)
     */
    public static native void setNumThreads(int n);

    /** @return the thread count in force (at least 1) */
    public static native int numThreads();

    /**
     * The f32 matrix-multiply kernel in force, as JSON: {@code requested} ({@code auto}, {@code fma}
     * or {@code amx}: the setting), {@code kernel} ({@code fma} or {@code amx}: what large products
     * run on) and {@code reason} (why; for example why AMX is not usable on this machine). AMX is
     * used where the CPU has it (Intel Sapphire Rapids and later) and the OS grants it, with an
     * fp32-accurate bf16x6 split; see {@code docs/GEMM.md}.
     *
     * @return the JSON description
     */
    public static native String gemmKernel();

    /**
     * Chooses the f32 matrix-multiply kernel process-wide from the next product on (overrides the
     * {@code FERRODL_GEMM} environment variable): {@code auto} (default: AMX for large products when
     * usable), {@code fma} (never AMX) or {@code amx} (AMX for every product when usable).
     *
     * @param name {@code auto}, {@code fma} or {@code amx}, case-insensitive
     * @throws org.ferrodl.exception.DL4JInvalidInputException for any other name
     */
    public static native void setGemmKernel(String name);

    /**
     * Native memory of this process as JSON: {@code inUse} (bytes the engine holds now: networks,
     * buffers, relay, codec), {@code peak} (the most held at once) and {@code budget} (the cap every
     * large native allocation is checked against before it is made).
     *
     * @return the JSON object
     */
    public static native String nativeMemory();

    /**
     * The same numbers as {@link #nativeMemory()} without JSON, for callers that record them often
     * (the Spark masters' training statistics).
     *
     * @return {@code {inUse, peak, budget}} in bytes
     */
    public static native long[] nativeMemoryBytes();

    /**
     * Sets the native memory budget, process-wide. Any native allocation whose size comes from
     * outside (a network's parameters, gradients and updater state, a minibatch's activations and
     * layer workspaces, decode buffers, relay frames) that would take native memory past it is
     * refused with {@link org.ferrodl.exception.NativeMemoryException} before anything is allocated.
     *
     * @param bytes the budget; 0 restores the default (physical memory, or the
     *     {@code FERRODL_NATIVE_MEMORY} environment variable)
     */
    public static native void setNativeMemoryBudget(long bytes);
}
