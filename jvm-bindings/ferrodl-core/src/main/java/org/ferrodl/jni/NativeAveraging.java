package org.ferrodl.jni;

/**
 * Raw JNI entry points of parameter averaging's rounds inside one Spark job (the Rust crate
 * {@code ferrodl-averaging}): on the driver a relay (the gradient-sharing relay's authenticated
 * TCP hub) whose state collects every worker's round messages; in each worker task one connection
 * that sends the worker's parameters and updater state after a round and returns the average of
 * every worker's, computed in the same order on every worker and on the driver. Used by the Spark
 * module's {@code ParameterAveragingTrainingMaster}; users never call it.
 *
 * <p>Thread-safety: any thread; calls on one handle are serialized natively.
 */
public final class NativeAveraging {
    static {
        NativeLoader.load();
    }

    private NativeAveraging() {
    }

    /**
     * Starts the driver's relay of one fit.
     *
     * @param settingsJson the relay settings, as for {@link NativeRelay#start}
     * @param workers the number of worker tasks (each sends one message per round)
     * @param rounds the number of averaging rounds (the final state is the last one's average)
     * @param network the driver's network or graph handle: the fit's start state (every worker
     *     receives it when it connects, see {@link #restoreStart}), read without a Java copy
     * @param updater whether the start state includes the network's updater state
     * @return a handle, never 0
     */
    public static native long startRelay(String settingsJson, int workers, int rounds, long network,
                                         boolean updater);

    /** @param h relay handle @return the TCP port it listens on */
    public static native int port(long h);

    /** Stops the relay (idempotent); the final state stays readable. @param h relay handle */
    public static native void shutdown(long h);

    /**
     * Writes the last round's average (of the workers that fitted in it) straight into the engine
     * arrays of {@code network} (no Java copy): its parameters, and its updater state when
     * {@code updater} and every contributor of that round sent one.
     *
     * @param h relay handle, after {@link #shutdown}
     * @param network the driver's network or graph handle ({@code nativeHandle()})
     * @return 0 when no round had a contributor (nothing written), 1 when the parameters were
     *     written, 3 when the updater state was too
     */
    public static native int applyFinal(long h, long network, boolean updater);

    /**
     * @param h relay handle, after {@link #shutdown}
     * @return {@code [rounds completed, iterations (sum over rounds of the most one worker made),
     *     contributors of the last round, their mean last score, minibatches, examples]}
     */
    public static native double[] finalSummary(long h);

    /** @param h relay handle @return its counters as JSON (as {@link NativeRelay#statsJson}) */
    public static native String statsJson(long h);

    /** @param h relay handle to release (shuts it down first if needed) */
    public static native void destroyRelay(long h);

    /**
     * Connects a worker task to the relay.
     *
     * @param configJson {@code {"relayAddress","secretHex","partition","attempt","stage","workers",
     *     "connectTimeoutMs","ioTimeoutMs","queueLimit","maxMessageBytes","encrypt"}}
     * @return a worker handle, never 0
     */
    public static native long connect(String configJson);

    /**
     * Writes the fit's start state, received from the driver when this worker connected, into a
     * network's engine arrays: its parameters, and its updater state when {@code updater} and the
     * driver sent one. The network's training RNG (dropout) starts again from its configuration's
     * seed and its {@code rnnTimeStep} state is cleared, so a network kept from an earlier fit
     * starts as a new one would. Once per worker handle.
     *
     * @param h worker handle
     * @param network network or graph handle with the driver's configuration (same sizes)
     * @param updater whether to restore the updater state too
     */
    public static native void restoreStart(long h, long network, boolean updater);

    /**
     * Waits until every other worker of the fit is connected (each says hello through the relay),
     * so that this worker's round messages reach all of them.
     *
     * @return true once they are; false when {@code timeoutMs} passed first (call again)
     */
    public static native boolean awaitPeers(long h, long timeoutMs);

    /**
     * Sends this worker's message of one round straight from the engine's arrays (no Java copy).
     * The network must not change until {@link #applyAverage} of this round: the average reads
     * this worker's share from it.
     *
     * @param network the handle of a {@code NativeNetwork} or {@code NativeGraph} (its owner's
     *     {@code nativeHandle()})
     * @param contributes false when it fitted no minibatch this round: only the header is sent
     * @param updaterState whether its updater state is sent too
     */
    public static native void sendRound(long h, long network, int round, int iterations, int minibatches,
                                        long examples, double score, boolean contributes, boolean updaterState);

    /** @return true once every worker's message of {@code round} arrived (waits up to {@code timeoutMs}) */
    public static native boolean awaitRound(long h, int round, long timeoutMs);

    /** @return the partitions whose message of {@code round} has not arrived */
    public static native long[] missing(long h, int round);

    /**
     * Writes the last completed round's average into the engine's arrays of {@code network} (the
     * one {@link #sendRound} sent from, unchanged since).
     *
     * @param updater whether to average the updater state too (when every contributor sent it)
     * @return 0 when nobody fitted in the round (nothing written), 1 when the parameters were
     *     written, 3 when the updater state was written too
     */
    public static native int applyAverage(long h, long network, boolean updater);

    /** @return {@code [contributors, most iterations one worker made, mean last score]} of the last round */
    public static native double[] averageSummary(long h);

    /**
     * Waits until the relay applied every message of this worker, then closes.
     *
     * @return {@code [messages sent, wire bytes sent, messages received, bytes received]}
     */
    public static native long[] finish(long h);

    /** @param h worker handle to release (closes the connection if still open) */
    public static native void destroyWorker(long h);
}
