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
}
