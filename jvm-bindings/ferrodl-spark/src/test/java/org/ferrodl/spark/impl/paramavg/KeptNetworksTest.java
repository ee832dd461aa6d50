package org.ferrodl.spark.impl.paramavg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.junit.jupiter.api.Test;

/**
 * Worker networks kept between fits ({@link KeptNetworks}, the default) train exactly as networks
 * built for every fit: same parameters, updater state and counters to the bit, dropout included
 * (a kept network's training RNG starts again from the seed), with and without saveUpdater.
 */
class KeptNetworksTest {
    private static final String KEEP = AveragingRounds.KEEP_NETWORKS;

    /** A network whose training draws random numbers (dropout), so a continued RNG would show. */
    private static MultiLayerConfiguration conf(IUpdater updater) {
        return new NeuralNetConfiguration.Builder().seed(11).updater(updater).list()
                .layer(new DenseLayer.Builder().nIn(SparkTestSupport.N_IN).nOut(16).activation(Activation.RELU)
                        .dropOut(0.7).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(16).nOut(SparkTestSupport.N_OUT)
                        .activation(Activation.SOFTMAX).build())
                .build();
    }

    private static MultiLayerNetwork fit(MultiLayerConfiguration conf, boolean saveUpdater, boolean keep, int epochs) {
        JavaSparkContext sc = SparkTestSupport.sc();
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(2).saveUpdater(saveUpdater).rngSeed(5).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc, conf, tm);
        JavaRDD<DataSet> rdd = sc.parallelize(SparkTestSupport.data(16, 4, 3), 2).cache();
        sc.setLocalProperty(KEEP, Boolean.toString(keep));
        try {
            for (int e = 0; e < epochs; e++) {
                spark.fit(rdd);
            }
        } finally {
            sc.setLocalProperty(KEEP, null);
            rdd.unpersist(false);
        }
        return spark.getNetwork();
    }

    @Test
    void keptNetworksTrainAsNewOnes() {
        for (boolean saveUpdater : new boolean[] {true, false}) {
            MultiLayerConfiguration conf = conf(saveUpdater ? new Adam(0.01) : new Nesterovs(0.05, 0.9));
            KeptNetworks.close(0);
            MultiLayerNetwork built = fit(conf, saveUpdater, false, 3);
            assertEquals(0, KeptNetworks.size(), "keepNetworks=false keeps nothing");
            long before = KeptNetworks.reused();
            MultiLayerNetwork kept = fit(conf, saveUpdater, true, 3);
            // both workers of fits 2 and 3 took the network their task of the fit before kept
            assertEquals(4, KeptNetworks.reused() - before, "saveUpdater " + saveUpdater);
            assertEquals(2, KeptNetworks.size());
            String what = "saveUpdater " + saveUpdater;
            assertEquals(0f, SparkTestSupport.maxAbsDiff(built.params().toFloatVector(), kept.params().toFloatVector()),
                    what);
            assertEquals(0f, SparkTestSupport.maxAbsDiff(built.getUpdaterState().toFloatVector(),
                    kept.getUpdaterState().toFloatVector()), what);
            assertEquals(built.getIterationCount(), kept.getIterationCount(), what);
            assertEquals(3, kept.getEpochCount(), what);
            // the parameters moved: the comparison above is not between two untrained networks
            assertTrue(SparkTestSupport.maxAbsDiff(SparkTestSupport.net(conf).params().toFloatVector(),
                    kept.params().toFloatVector()) > 1e-3, what);
        }
        // idle networks are closed (the sweeper does this after KeptNetworks.IDLE_MS)
        KeptNetworks.close(0);
        assertEquals(0, KeptNetworks.size());
    }

    /** Another configuration never takes a kept network: it builds its own. */
    @Test
    void aKeptNetworkServesOnlyItsConfiguration() {
        KeptNetworks.close(0);
        fit(conf(new Adam(0.01)), true, true, 1);
        long before = KeptNetworks.reused();
        fit(conf(new Adam(0.02)), true, true, 1);
        fit(conf(new Adam(0.01)), false, true, 1); // same layers, other saveUpdater: other key
        assertEquals(before, KeptNetworks.reused());
        assertEquals(6, KeptNetworks.size());
        KeptNetworks.close(0);
    }
}
