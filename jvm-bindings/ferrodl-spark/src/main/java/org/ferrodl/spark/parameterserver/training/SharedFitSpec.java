package org.ferrodl.spark.parameterserver.training;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.impl.common.NetworkKind;

/**
 * What every worker of one gradient-sharing fit receives through a Spark broadcast: the network,
 * the relay's address and the per-fit secret, and the encoding settings. Immutable, plain fields.
 */
final class SharedFitSpec<B> implements Serializable {
    private static final long serialVersionUID = 2L;

    /** The network type: what the engine builds from {@link #networkJson}, how a minibatch is fitted. */
    final NetworkKind<?, B> kind;
    final String networkJson;
    final float[] params;
    final float[] updaterState;
    final String relayAddress;
    final String secretHex;
    final String thresholdAlgorithmJson;
    final String residualPostProcessorJson;
    final String thresholdStateJson;
    final int batchSizePerWorker;
    final int replicasPerWorker;
    final int prefetchNumBatches;
    final long connectTimeoutMs;
    final long ioTimeoutMs;
    final int queueLimit;
    final long maxMessageBytes;
    final boolean collectStats;
    final boolean encodingDebugMode;
    final long debugLongerIterationsMs;
    /** Seal relay frames (spark.network.crypto.enabled). */
    final boolean encrypt;
    final long stallTimeoutMs;
    /** The wrapper's listeners: called after each minibatch of every replica ({@link ReplicaModel}). */
    final List<TrainingListener> listeners;
    /** The master's hooks: run around each minibatch of every replica ({@link ReplicaModel}). */
    final List<TrainingHook> hooks;

    SharedFitSpec(NetworkKind<?, B> kind, String networkJson, float[] params, float[] updaterState, String relayAddress, String secretHex,
                  String thresholdAlgorithmJson, String residualPostProcessorJson, String thresholdStateJson,
                  int batchSizePerWorker, int replicasPerWorker, int prefetchNumBatches, long connectTimeoutMs,
                  long ioTimeoutMs, int queueLimit, long maxMessageBytes, boolean collectStats,
                  boolean encodingDebugMode, long debugLongerIterationsMs, boolean encrypt, long stallTimeoutMs,
                  List<TrainingListener> listeners, List<TrainingHook> hooks) {
        this.kind = kind;
        this.networkJson = networkJson;
        this.params = params;
        this.updaterState = updaterState;
        this.relayAddress = relayAddress;
        this.secretHex = secretHex;
        this.thresholdAlgorithmJson = thresholdAlgorithmJson;
        this.residualPostProcessorJson = residualPostProcessorJson;
        this.thresholdStateJson = thresholdStateJson;
        this.batchSizePerWorker = batchSizePerWorker;
        this.replicasPerWorker = replicasPerWorker;
        this.prefetchNumBatches = prefetchNumBatches;
        this.connectTimeoutMs = connectTimeoutMs;
        this.ioTimeoutMs = ioTimeoutMs;
        this.queueLimit = queueLimit;
        this.maxMessageBytes = maxMessageBytes;
        this.collectStats = collectStats;
        this.encodingDebugMode = encodingDebugMode;
        this.debugLongerIterationsMs = debugLongerIterationsMs;
        this.encrypt = encrypt;
        this.stallTimeoutMs = stallTimeoutMs;
        this.listeners = listeners == null ? List.of() : new ArrayList<>(listeners);
        this.hooks = hooks == null ? List.of() : new ArrayList<>(hooks);
    }
}
