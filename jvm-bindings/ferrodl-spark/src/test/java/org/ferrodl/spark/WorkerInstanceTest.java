package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.common.primitives.Pair;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.TrainingWorker;
import org.ferrodl.spark.api.WorkerConfiguration;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;
import org.ferrodl.spark.impl.graph.SparkComputationGraphTest;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.AveragingAggregate;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedWorkerResult;
import org.junit.jupiter.api.Test;

/**
 * {@code TrainingMaster.getWorkerInstance} of both masters, used on the executors as the
 * reference's ExecuteWorkerFlatMap uses a worker (getInitialModel, processMinibatch until it
 * returns the task's result); the master's hooks and listeners ({@code addHook},
 * {@code setListeners}) on the workers of both masters. About 10 s.
 */
class WorkerInstanceTest {

    /** Counts hook calls in this JVM (local mode: the executors share it). */
    public static final class CountingHook implements TrainingHook {
        private static final long serialVersionUID = 1L;
        static final AtomicInteger PRE = new AtomicInteger();
        static final AtomicInteger POST = new AtomicInteger();
        static final List<Double> POST_SCORES = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        public void preUpdate(DataSet minibatch, Model model) {
            PRE.incrementAndGet();
        }

        @Override
        public void postUpdate(DataSet minibatch, Model model) {
            POST.incrementAndGet();
            POST_SCORES.add(model.score());
        }

        @Override
        public void preUpdate(MultiDataSet minibatch, Model model) {
            PRE.incrementAndGet();
        }

        @Override
        public void postUpdate(MultiDataSet minibatch, Model model) {
            POST.incrementAndGet();
            POST_SCORES.add(model.score());
        }

        /** Stateless: every instance is equal (so a master read back from JSON equals the original). */
        @Override
        public boolean equals(Object o) {
            return o instanceof CountingHook;
        }

        @Override
        public int hashCode() {
            return CountingHook.class.hashCode();
        }

        static void reset() {
            PRE.set(0);
            POST.set(0);
            POST_SCORES.clear();
        }
    }

    /** Counts iterations in this JVM. */
    static final class CountingListener implements TrainingListener, Serializable {
        private static final long serialVersionUID = 1L;
        static final AtomicInteger ITERATIONS = new AtomicInteger();

        @Override
        public void iterationDone(Model model, int iteration, int epoch) {
            ITERATIONS.incrementAndGet();
        }
    }

    /** One task as the reference runs a worker: minibatches of two objects each, in partition order. */
    private static <W extends TrainingWorker<AveragingAggregate>> Iterator<AveragingAggregate> runTask(
            W worker, Iterator<DataSet> objects) {
        List<DataSet> all = new ArrayList<>();
        objects.forEachRemaining(all::add);
        if (all.isEmpty()) {
            return List.of(worker.getFinalResultNoData()).iterator();
        }
        try (MultiLayerNetwork net = worker.getInitialModel()) {
            for (int i = 0; i < all.size(); i += 2) {
                DataSet minibatch = DataSet.merge(all.subList(i, Math.min(i + 2, all.size())));
                Pair<AveragingAggregate, SparkTrainingStats> r = worker.processMinibatchWithStats(minibatch, net,
                        i + 2 >= all.size());
                if (r != null) {
                    return List.of(r.getFirst()).iterator();
                }
            }
            return List.of(worker.getFinalResult(net)).iterator();
        }
    }

    @Test
    void parameterAveragingWorkerInstanceTrainsAsTheMastersFit() {
        // 8 objects of 4 examples, 2 workers, minibatches of 8, averaging every 2: one split, each
        // worker fits objects 0-3 or 4-7 (the Balanced dealing = parallelize's two slices)
        List<DataSet> train = data(8, 4, 41);
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(8).averagingFrequency(2).collectTrainingStats(true)
                .trainingHooks(new CountingHook()).build();
        CountingListener.ITERATIONS.set(0);
        tm.setListeners(List.of(new CountingListener()));

        SparkDl4jMultiLayer viaWorker = new SparkDl4jMultiLayer(sc(), conf(new Adam(0.02), 1e-3), tm);
        TrainingWorker<AveragingAggregate> worker = tm.getWorkerInstance(viaWorker);
        WorkerConfiguration wc = worker.getDataConfiguration();
        assertFalse(wc.isGraphNetwork());
        assertEquals(8, wc.getBatchSizePerWorker());
        assertEquals(4, wc.getDataSetObjectSizeExamples());
        assertTrue(wc.isCollectTrainingStats());

        CountingHook.reset();
        JavaRDD<DataSet> rdd = sc().parallelize(train, 2);
        List<AveragingAggregate> results = rdd.mapPartitions(it -> runTask(worker, it)).collect();
        assertEquals(2, results.size());
        assertEquals(4, CountingHook.PRE.get(), "the master's hook ran around each of the 4 minibatches");
        assertEquals(4, CountingHook.POST.get());
        assertEquals(4, CountingListener.ITERATIONS.get(), "the master's listener ran on the workers");
        for (AveragingAggregate r : results) {
            assertEquals(1, r.getWorkers());
            assertEquals(2, r.getMinibatches());
            assertEquals(16, r.getExamples());
            assertEquals(1, r.getWorkerStats().size(), "one statistics record per task");
            assertEquals(2, r.getWorkerStats().get(0).minibatches());
        }
        AveragingAggregate sum = AveragingAggregate.empty();
        for (AveragingAggregate r : results) {
            sum = sum.add(r);
        }
        sum = sum.add(worker.getFinalResultNoData()); // a task without data changes nothing
        assertEquals(2, sum.getWorkers());

        // the master's own fit of the same data from the same start
        CountingHook.reset();
        CountingListener.ITERATIONS.set(0);
        SparkDl4jMultiLayer viaMaster = new SparkDl4jMultiLayer(sc(), conf(new Adam(0.02), 1e-3), tm);
        viaMaster.fit(sc().parallelize(train, 2));
        assertEquals(4, CountingHook.PRE.get());
        assertEquals(4, CountingListener.ITERATIONS.get());
        float dp = maxAbsDiff(viaMaster.getNetwork().params().toFloatVector(), sum.getParameters().toFloatVector());
        float du = maxAbsDiff(viaMaster.getNetwork().getUpdaterState().toFloatVector(),
                sum.getUpdaterState().toFloatVector());
        assertTrue(dp <= 1e-6f, "averaged worker parameters vs the master's fit: " + dp);
        assertTrue(du <= 1e-6f, "averaged updater state vs the master's fit: " + du);
        assertEquals(viaMaster.getScore(), sum.getScore(), 1e-6);
        assertTrue(maxAbsDiff(viaWorker.getNetwork().params().toFloatVector(),
                sum.getParameters().toFloatVector()) > 1e-3, "training moved the parameters");

        // the other network type's methods, and use before getInitialModel, refuse clearly
        IllegalStateException wrongKind = assertThrows(IllegalStateException.class, worker::getInitialModelGraph);
        assertTrue(wrongKind.getMessage().contains("trains a MultiLayerNetwork"), wrongKind.getMessage());
        TrainingWorker<AveragingAggregate> fresh = tm.getWorkerInstance(viaWorker);
        try (MultiLayerNetwork other = SparkTestSupport.net(conf(new Adam(0.02), 1e-3))) {
            IllegalStateException early = assertThrows(IllegalStateException.class,
                    () -> fresh.processMinibatch(train.get(0), other, true));
            assertTrue(early.getMessage().contains("call getInitialModel()"), early.getMessage());
        }
        assertNull(AveragingAggregate.empty().getParameters());
        assertEquals(0, fresh.getInstanceId());
    }

    @Test
    void parameterAveragingGraphWorkerInstanceTrainsAsTheMastersFit() {
        List<MultiDataSet> train = SparkComputationGraphTest.twoByTwoData(8, 4, 43);
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(8).averagingFrequency(2).saveUpdater(false).build();
        SparkComputationGraph viaWorker = new SparkComputationGraph(sc(),
                SparkComputationGraphTest.twoByTwo(new Nesterovs(0.05, 0.9), 0), tm);
        TrainingWorker<AveragingAggregate> worker = tm.getWorkerInstance(viaWorker);
        assertTrue(worker.getDataConfiguration().isGraphNetwork());
        List<AveragingAggregate> results = sc().parallelize(train, 2).mapPartitions(it -> {
            List<MultiDataSet> all = new ArrayList<>();
            it.forEachRemaining(all::add);
            try (ComputationGraph g = worker.getInitialModelGraph()) {
                AveragingAggregate r = null;
                for (int i = 0; i < all.size() && r == null; i += 2) {
                    r = worker.processMinibatch(MultiDataSet.merge(all.subList(i, i + 2)), g, i + 2 >= all.size());
                }
                return List.of(r).iterator();
            }
        }).collect();
        AveragingAggregate sum = results.get(0).add(results.get(1));
        assertNull(sum.getUpdaterState(), "saveUpdater(false): no updater state is returned");

        SparkComputationGraph viaMaster = new SparkComputationGraph(sc(),
                SparkComputationGraphTest.twoByTwo(new Nesterovs(0.05, 0.9), 0), tm);
        viaMaster.fitMultiDataSet(sc().parallelize(train, 2));
        float dp = maxAbsDiff(viaMaster.getNetwork().params().toFloatVector(), sum.getParameters().toFloatVector());
        assertTrue(dp <= 1e-6f, "averaged graph worker parameters vs the master's fit: " + dp);
        assertEquals(viaMaster.getScore(), sum.getScore(), 1e-6);
        IllegalStateException wrongKind = assertThrows(IllegalStateException.class, worker::getInitialModel);
        assertTrue(wrongKind.getMessage().contains("trains a ComputationGraph"), wrongKind.getMessage());
    }

    @Test
    void sharedTrainingWorkerInstanceGivesTheInitialModelAndHooksRunOnReplicas() {
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(4).batchSizePerWorker(4).workersPerNode(1)
                .build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Adam(0.02), 0), tm);
        float[] driverParams = spark.getNetwork().params().toFloatVector();
        TrainingWorker<SharedWorkerResult> worker = tm.getWorkerInstance(spark);
        assertEquals(4, worker.getDataConfiguration().getBatchSizePerWorker());
        assertTrue(worker.getInstanceId() > 0);
        // on an executor: the initial model is the driver's network; training refuses outside a fit
        List<String> seen = sc().parallelize(List.of(1, 2), 2).map(i -> {
            try (MultiLayerNetwork net = worker.getInitialModel()) {
                float diff = maxAbsDiff(driverParams, net.params().toFloatVector());
                String refusal;
                try {
                    worker.processMinibatch(data(1, 4, 1).get(0), net, true);
                    refusal = "none";
                } catch (UnsupportedOperationException e) {
                    refusal = e.getMessage();
                }
                return diff + "|" + refusal;
            }
        }).collect();
        for (String s : seen) {
            assertTrue(s.startsWith("0.0|"), "initial model == driver network: " + s);
            assertTrue(s.contains("gradient sharing trains only inside a fit"), s);
        }
        assertThrows(UnsupportedOperationException.class, () -> worker.addHook(new CountingHook()));

        // the master's hooks and listeners run around every replica minibatch of a fit
        CountingHook.reset();
        CountingListener.ITERATIONS.set(0);
        tm.addHook(new CountingHook());
        tm.setListeners(List.of(new CountingListener()));
        spark.fit(sc().parallelize(data(6, 4, 47), 2));
        assertEquals(6, CountingHook.PRE.get(), "6 minibatches of 4 examples");
        assertEquals(6, CountingHook.POST.get());
        assertEquals(6, CountingListener.ITERATIONS.get());
        for (double score : CountingHook.POST_SCORES) {
            assertTrue(score > 0 && Double.isFinite(score), "postUpdate sees the minibatch's score: " + score);
        }
        assertEquals(1, tm.getTrainingHooks().size());
        SharedTrainingMaster back = SharedTrainingMaster.fromJson(tm.toJson());
        assertEquals(tm, back, "hooks travel in the JSON");
        tm.removeHook(tm.getTrainingHooks().get(0));
        assertTrue(tm.getTrainingHooks().isEmpty());
        assertNotNull(back.getTrainingHooks().get(0));
    }
}
