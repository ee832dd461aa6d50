package org.ferrodl.spark.impl.common;

import java.io.Serializable;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Everything a worker needs to rebuild the driver's network: configuration JSON, parameters,
 * optional updater state and counters. Broadcast once per split; plain arrays so it serializes
 * compactly under Java serialization and Kryo alike.
 */
public final class NetworkSnapshot implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String configurationJson;
    private final float[] params;
    private final float[] updaterState;
    private final long iterationCount;
    private final long epochCount;

    public NetworkSnapshot(String configurationJson, float[] params, float[] updaterState,
                           long iterationCount, long epochCount) {
        this.configurationJson = configurationJson;
        this.params = params;
        this.updaterState = updaterState;
        this.iterationCount = iterationCount;
        this.epochCount = epochCount;
    }

    /** Takes a snapshot of {@code network}; {@code withUpdater} includes the updater state. */
    public static NetworkSnapshot of(MultiLayerNetwork network, boolean withUpdater) {
        return new NetworkSnapshot(network.getLayerWiseConfigurations().toJson(),
                network.params().toFloatVector(),
                withUpdater ? network.getUpdaterState().toFloatVector() : null,
                network.getIterationCount(), network.getEpochCount());
    }

    /** Builds a new native network from this snapshot. The caller closes it. */
    public MultiLayerNetwork restore() {
        MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerConfiguration.fromJson(configurationJson));
        net.init(Nd4j.create(params, 1, params.length), false);
        if (updaterState != null) {
            net.setUpdaterState(Nd4j.create(updaterState, 1, updaterState.length));
        }
        net.setIterationCount((int) iterationCount);
        net.setEpochCount((int) epochCount);
        return net;
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
