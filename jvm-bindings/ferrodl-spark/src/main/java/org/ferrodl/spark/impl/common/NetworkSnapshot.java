package org.ferrodl.spark.impl.common;

import java.io.Serializable;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;

/**
 * Everything a worker needs to rebuild the driver's network: which kind it is, configuration
 * JSON, parameters, optional updater state and counters. Broadcast once per split; plain arrays so
 * it serializes compactly under Java serialization and Kryo alike.
 *
 * @param <N> the network type it restores
 */
public final class NetworkSnapshot<N extends NativeHandleOwner & Model> implements Serializable {
    private static final long serialVersionUID = 2L;

    private final NetworkKind<N, ?> kind;
    private final String configurationJson;
    private final float[] params;
    private final float[] updaterState;
    private final int iterationCount;
    private final int epochCount;

    private NetworkSnapshot(NetworkKind<N, ?> kind, String configurationJson, float[] params, float[] updaterState,
                            int iterationCount, int epochCount) {
        this.kind = kind;
        this.configurationJson = configurationJson;
        this.params = params;
        this.updaterState = updaterState;
        this.iterationCount = iterationCount;
        this.epochCount = epochCount;
    }

    /** Takes a snapshot of {@code network}; {@code withUpdater} includes the updater state. */
    public static <N extends NativeHandleOwner & Model> NetworkSnapshot<N> of(NetworkKind<N, ?> kind, N network,
                                                                          boolean withUpdater) {
        return new NetworkSnapshot<>(kind, kind.configurationJson(network), network.params().toFloatVector(),
                withUpdater ? kind.updaterState(network).toFloatVector() : null,
                kind.iterationCount(network), kind.epochCount(network));
    }

    /** Builds a new native network from this snapshot. The caller closes it. */
    public N restore() {
        N net = kind.create(configurationJson, params);
        if (updaterState != null) {
            kind.setUpdaterState(net, Nd4j.create(updaterState, 1, updaterState.length));
        }
        kind.setCounters(net, iterationCount, epochCount);
        return net;
    }

    public NetworkKind<N, ?> getKind() {
        return kind;
    }

    public String getConfigurationJson() {
        return configurationJson;
    }

    public float[] getParams() {
        return params;
    }

    public float[] getUpdaterState() {
        return updaterState;
    }
}
