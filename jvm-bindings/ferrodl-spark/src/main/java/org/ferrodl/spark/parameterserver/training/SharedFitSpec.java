package org.ferrodl.spark.parameterserver.training;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.impl.common.NetworkKind;

/**
 * What every worker of one gradient-sharing fit receives inside its Spark task (small: no
 * broadcast of its own, which cost each task 40-60 ms to read on the bench cluster): the network's
 * configuration, the relay's address and the per-fit secret, and the encoding settings. The
 * parameters and the start updater state come from the relay's snapshot at connect. Immutable,
 * plain fields.
 */
final class SharedFitSpec<B> implements Serializable {
    private static final long serialVersionUID = 2L;

    /** The network type: what the engine builds from {@link #networkJson}, how a minibatch is fitted. */
    final NetworkKind<?, B> kind;
    final String networkJson;
    /** The network's parameter count (the parameters themselves come from the relay). */
    final int paramCount;
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

    SharedFitSpec(NetworkKind<?, B> kind, String networkJson, int paramCount, String relayAddress, String secretHex,
                  String thresholdAlgorithmJson, String residualPostProcessorJson, String thresholdStateJson,
                  int batchSizePerWorker, int replicasPerWorker, int prefetchNumBatches, long connectTimeoutMs,
                  long ioTimeoutMs, int queueLimit, long maxMessageBytes, boolean collectStats,
                  boolean encodingDebugMode, long debugLongerIterationsMs, boolean encrypt, long stallTimeoutMs,
                  List<TrainingListener> listeners, List<TrainingHook> hooks) {
        this.kind = kind;
        this.networkJson = networkJson;
        this.paramCount = paramCount;
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
