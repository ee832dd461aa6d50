package org.ferrodl.jni;

/**
 * Raw JNI entry points of the driver-side update relay of gradient sharing (a TCP hub that
 * authenticates workers, applies every update to its master copy of the parameters and forwards it
 * to the other workers). Used by the Spark module's {@code SharedTrainingMaster}; users never call it.
 *
 * <p>Thread-safety: any thread; calls on one handle are serialized natively. The relay's own
 * threads run until {@link #shutdown(long)}.
 */
public final class NativeRelay {
    static {
        NativeLoader.load();
    }

    private NativeRelay() {
    }

    /**
     * Starts a relay.
     *
     * @param settingsJson {@code {"bindHost":..,"portFrom":..|null,"portTo":..|null,"secretHex":..,
     *     "maxMessageBytes":..,"queueLimit":..,"ioTimeoutMs":..,"handshakeTimeoutMs":..}}
     * @param network the driver's network or graph handle ({@code nativeHandle()}): its parameters and
     *     updater state at the start of the fit, which every connecting worker receives with the
     *     current parameters (read from the engine's arrays, no Java copy)
     * @param statesPerNode the replicas of each worker node (workersPerNode): each node sends their
     *     final updater states with its FINISH, and the relay admits that much
     * @param iteration the network's iteration counter
     * @param epoch the network's epoch counter
     * @return a handle, never 0
     */
    public static native long start(String settingsJson, long network, int statesPerNode, long iteration,
                                    long epoch);

    /** @param h handle @return the TCP port the relay listens on */
    public static native int port(long h);

    /**
     * Writes the final master copy straight into the engine arrays of {@code network} (no Java
     * copy): its parameters, and, when {@code updater} and the workers sent their final updater
     * states when they finished, the mean of those.
     *
     * @param h handle, after {@link #shutdown}
     * @param network the driver's network or graph handle ({@code nativeHandle()})
     * @return 1 when only the parameters were written, 3 when the updater state was too
     */
    public static native int applyFinal(long h, long network, boolean updater);

    /** @param h handle @return {@code [iteration, epoch, messagesApplied]} of the master copy */
    public static native long[] counters(long h);

    /** @param h handle @return the relay's counters (per worker and totals) as JSON */
    public static native String statsJson(long h);

    /**
     * Stops accepting, closes every connection and joins the relay's threads; idempotent. The
     * parameters, counters and statistics stay readable until {@link #destroy(long)}.
     *
     * @param h handle
     */
    public static native void shutdown(long h);

    /** @param h handle to release (shuts the relay down first if needed) */
    public static native void destroy(long h);
}
