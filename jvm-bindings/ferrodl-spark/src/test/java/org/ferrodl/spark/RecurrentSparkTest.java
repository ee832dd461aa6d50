package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.BackpropType;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.LSTM;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.Test;

/**
 * A recurrent network on Spark: minibatches of time series of different lengths (masks), truncated
 * BPTT inside the worker; one parameter-averaging worker equals local training on the same merged
 * minibatches (1e-5) through both the exported files (native DataSet format) and the RDD, and the
 * distributed evaluation counts exactly the unmasked steps the local one counts; gradient sharing
 * (features masks through the replicas, TBPTT inside them) trains the same network on two workers
 * with the recommended threshold settings (README, "Gradient sharing"), which this 192-parameter
 * network reaches as the MNIST MLP does.
 */
class RecurrentSparkTest {

    private static MultiLayerConfiguration conf() {
        return conf(0.01);
    }

    private static MultiLayerConfiguration conf(double learningRate) {
        return new NeuralNetConfiguration.Builder().seed(17).updater(new Adam(learningRate)).list()
                .layer(new LSTM.Builder().nIn(3).nOut(5).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(5).nOut(2)
                        .build())
                .backpropType(BackpropType.TruncatedBPTT).tBPTTLength(3)
                .build();
    }

    private static List<DataSet> data() {
        return data(8, 5);
    }

    /** DataSets of 4 sequences; DataSet d has 4 + d % 3 steps, example i uses its first 2 + (i + d) % 3. */
    private static List<DataSet> data(int count, long seed) {
        Random r = new Random(seed);
        List<DataSet> out = new ArrayList<>();
        for (int d = 0; d < count; d++) {
            int t = 4 + d % 3;
            float[] f = new float[4 * 3 * t];
            float[] l = new float[4 * 2 * t];
            float[] m = new float[4 * t];
            for (int i = 0; i < 4; i++) {
                int len = Math.min(t, 2 + (i + d) % 3);
                for (int s = 0; s < t; s++) {
                    for (int c = 0; c < 3; c++) {
                        f[(i * 3 + c) * t + s] = r.nextFloat() * 2 - 1;
                    }
                    // class: is the step's channel 0 positive
                    l[(i * 2 + (f[(i * 3) * t + s] > 0 ? 1 : 0)) * t + s] = 1;
                    m[i * t + s] = s < len ? 1 : 0;
                }
            }
            out.add(new DataSet(Nd4j.create(f, 4, 3, t), Nd4j.create(l, 4, 2, t), Nd4j.create(m, 4, t),
                    Nd4j.create(m, 4, t)));
        }
        return out;
    }

    @Test
    void oneWorkerEqualsLocalTrainingAndEvaluationCountsUnmaskedSteps() {
        List<DataSet> ds = data();
        MultiLayerNetwork local = net(conf());
        for (int i = 0; i < ds.size(); i += 2) {
            local.fit(DataSet.merge(ds.subList(i, i + 2)));
        }
        JavaRDD<DataSet> rdd = sc().parallelize(ds, 2);
        float[] want = local.params().toFloatVector();
        for (RDDTrainingApproach approach : RDDTrainingApproach.values()) {
            ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                    .batchSizePerWorker(8).averagingFrequency(2).rddTrainingApproach(approach).build();
            SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(), tm);
            float[] got = spark.fit(rdd).params().toFloatVector();
            assertTrue(maxAbsDiff(want, got) <= 1e-5f, approach + ": max diff " + maxAbsDiff(want, got));
            assertEquals(local.getIterationCount(), spark.getNetwork().getIterationCount(),
                    approach + ": one iteration per TBPTT segment");
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), local.getLayerWiseConfigurations(),
                new ParameterAveragingTrainingMaster.Builder(1, 4).batchSizePerWorker(8).build());
        spark.getNetwork().setParams(local.params());
        Evaluation distributed = spark.evaluate(rdd, 8);
        Evaluation here = local.evaluate(new ListDataSetIterator(ds, 1));
        long unmasked = 0;
        for (DataSet d : ds) {
            for (double v : d.getLabelsMaskArray().toDoubleVector()) {
                unmasked += Math.round(v);
            }
        }
        assertEquals(unmasked, here.getNumRowCounter(), "only unmasked steps are counted");
        assertEquals(here.getNumRowCounter(), distributed.getNumRowCounter());
        assertArrayEquals(new long[] {here.truePositives(0), here.truePositives(1), here.falsePositives(0)},
                new long[] {distributed.truePositives(0), distributed.truePositives(1), distributed.falsePositives(0)});
        local.close();
    }

    @Test
    void gradientSharingTrainsItOnTwoWorkersWithTheRecommendedThresholds() {
        // The default (Adaptive) and the cluster test's TargetSparsity 2.5e-3. Before the
        // small-network floor (at least 16 entries per message) and the first-threshold
        // calibration this network needed FixedThresholdAlgorithm(0.01): 1e-2 of 192 parameters
        // is 2 entries per message, and the threshold walked up from 1e-4 for ~180 steps.
        ThresholdAlgorithm[] recommended = {new AdaptiveThresholdAlgorithm(),
                new TargetSparsityThresholdAlgorithm(1e-4, 2.5e-3, TargetSparsityThresholdAlgorithm.DEFAULT_DECAY_RATE)};
        for (ThresholdAlgorithm algorithm : recommended) {
            SharedTrainingMaster tm = new SharedTrainingMaster.Builder(algorithm, 4)
                    .batchSizePerWorker(8)
                    .rddTrainingApproach(RDDTrainingApproach.Direct).rngSeed(1).build();
            // Adam 0.02: at 0.05 the two workers' summed steps made the score jump (one epoch
            // of ten runs at 6.4, and a CI run ended at 0.96 after 6 fits; 2026-11-27).
            SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(0.02), tm);
            DataSet test = DataSet.merge(data(8, 77));
            double before = spark.getNetwork().score(test);
            JavaRDD<DataSet> train = sc().parallelize(data(48, 6), 2);
            for (int epoch = 0; epoch < 8; epoch++) {
                spark.fit(train);
            }
            double after = spark.getNetwork().score(test);
            String name = algorithm.getClass().getSimpleName();
            // measured 2026-11-27 (load 14), Adam 0.02, 8 fits, four runs each: Adaptive 2.16 -> 0.15-0.21,
            // TargetSparsity 2.16 -> 0.16-0.22; no epoch from the fifth on above 0.38
            assertTrue(after < 0.3 * before, name + ": score " + before + " -> " + after);
            Evaluation e = spark.evaluate(sc().parallelize(data(8, 77), 2));
            assertTrue(e.accuracy() > 0.8, name + ": accuracy " + e.accuracy());
            System.out.println("RecurrentSparkTest " + name + ": score " + before + " -> " + after + ", accuracy "
                    + e.accuracy());
        }
    }

    @Test
    void oneWorkerTrainsARecurrentGraphAsLocally() {
        ComputationGraphConfiguration gc = new NeuralNetConfiguration.Builder().seed(19).updater(new Adam(0.01))
                .activation(Activation.TANH).graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(3))
                .addLayer("lstm", new LSTM.Builder().nOut(5).build(), "in")
                .addLayer("out", new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nOut(2)
                        .build(), "lstm")
                .setOutputs("out")
                .backpropType(BackpropType.TruncatedBPTT).tBPTTLength(3)
                .build();
        List<MultiDataSet> mds = new ArrayList<>();
        for (DataSet d : data()) {
            mds.add(MultiDataSet.fromDataSet(d));
        }
        try (ComputationGraph local = new ComputationGraph(gc)) {
            local.init();
            for (int i = 0; i < mds.size(); i += 2) {
                local.fit(MultiDataSet.merge(mds.subList(i, i + 2)));
            }
            ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                    .batchSizePerWorker(8).averagingFrequency(2).rddTrainingApproach(RDDTrainingApproach.Direct).build();
            SparkComputationGraph spark = new SparkComputationGraph(sc(), gc, tm);
            float[] got = spark.fitMultiDataSet(sc().parallelize(mds, 2)).params().toFloatVector();
            float[] want = local.params().toFloatVector();
            assertTrue(maxAbsDiff(want, got) <= 1e-5f, "max diff " + maxAbsDiff(want, got));
            assertEquals(local.getIterationCount(), spark.getNetwork().getIterationCount());
        }
    }
}
