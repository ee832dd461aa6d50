package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Invariant 6 (empty partitions, fewer objects than workers), evaluation equality, bad input. */
class SparkRobustnessTest {

    private static ParameterAveragingTrainingMaster master(int workers) {
        return new ParameterAveragingTrainingMaster.Builder(workers, 4).batchSizePerWorker(4)
                .averagingFrequency(2).rngSeed(3).collectTrainingStats(true).build();
    }

    @Test
    void fewerObjectsThanWorkersAndEmptyPartitionsStillTrain() {
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Adam(0.01), 0), master(4));
        float[] before = spark.getNetwork().params().toFloatVector();
        // 3 objects over 8 partitions: most partitions are empty, one worker of four gets nothing.
        spark.fit(sc().parallelize(data(3, 4, 1), 8));
        float[] after = spark.getNetwork().params().toFloatVector();
        assertTrue(SparkTestSupport.maxAbsDiff(before, after) > 0, "parameters must change");
        assertTrue(Double.isFinite(spark.getScore()));
        assertEquals(1, spark.getNetwork().getIterationCount(), "each worker fitted one minibatch of 4");
        SparkTrainingStats stats = spark.getSparkTrainingStats();
        assertNotNull(stats);
        assertEquals(3, stats.getWorkerStats().size(), "three workers had data");
    }

    @Test
    void emptyRddIsRefusedWithAClearMessage() {
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), master(2));
        JavaRDD<DataSet> empty = sc().parallelize(Collections.<DataSet>emptyList(), 2);
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class, () -> spark.fit(empty));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
        assertThrows(DL4JInvalidInputException.class, () -> spark.evaluate(empty));
    }

    @Test
    void wrongFeatureWidthInTheRddNamesTheProblem() {
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), master(2));
        List<DataSet> bad = new ArrayList<>(data(2, 4, 5));
        bad.add(new DataSet(Nd4j.zeros(4, 5), Nd4j.zeros(4, 3)));
        Exception e = assertThrows(Exception.class, () -> spark.fit(sc().parallelize(bad, 2)));
        String text = String.valueOf(e.getMessage());
        assertTrue(text.contains("nIn") && text.contains("5"), "message should name the width problem: " + text);
    }

    /** Invariant 7: distributed evaluation equals local evaluation for any partitioning. */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 8, 20})
    void distributedEvaluationEqualsLocal(int partitions) {
        MultiLayerNetwork net = net(conf(new Adam(0.05), 0));
        List<DataSet> train = data(10, 8, 77);
        for (DataSet ds : train) {
            net.fit(ds);
        }
        List<DataSet> test = data(9, 5, 78);
        Evaluation local = new Evaluation();
        for (DataSet ds : test) {
            local.eval(ds.getLabels(), net.output(ds.getFeatures(), false));
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net, master(2));
        Evaluation distributed = spark.evaluate(sc().parallelize(test, partitions));
        assertEquals(45, distributed.getNumRowCounter());
        for (int actual = 0; actual < SparkTestSupport.N_OUT; actual++) {
            for (int predicted = 0; predicted < SparkTestSupport.N_OUT; predicted++) {
                assertEquals(local.getConfusionMatrix().getCount(actual, predicted),
                        distributed.getConfusionMatrix().getCount(actual, predicted),
                        "confusion[" + actual + "][" + predicted + "]");
            }
        }
        assertEquals(local.accuracy(), distributed.accuracy(), 1e-12);
        assertEquals(local.f1(), distributed.f1(), 1e-9);
    }

    @Test
    void calculateScoreAveragesOverExamples() {
        MultiLayerNetwork net = net(conf(new Sgd(0.1), 0));
        List<DataSet> test = data(4, 5, 90);
        double expected = 0;
        for (DataSet ds : test) {
            expected += net.score(ds) * ds.numExamples();
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), net, master(2));
        assertEquals(expected / 20, spark.calculateScore(sc().parallelize(test, 3), true, 64), 1e-6);
        assertEquals(expected, spark.calculateScore(sc().parallelize(test, 3), false, 64), 1e-5);
    }

    @Test
    void sameSeedGivesIdenticalDistributedTraining() {
        float[][] results = new float[2][];
        for (int run = 0; run < 2; run++) {
            SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Adam(0.01), 0), master(2));
            spark.fit(sc().parallelize(data(12, 4, 8), 3));
            results[run] = spark.getNetwork().params().toFloatVector();
        }
        assertArrayEquals(results[0], results[1]);
    }
}
