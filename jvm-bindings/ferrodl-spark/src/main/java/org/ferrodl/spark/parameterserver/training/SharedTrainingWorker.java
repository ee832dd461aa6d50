package org.ferrodl.spark.parameterserver.training;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.ferrodl.spark.impl.common.TaskThreads;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.common.primitives.Pair;
import org.ferrodl.jni.NativeSharedWorker;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.WorkerConfiguration;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.TrainingWorker;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.PrefetchingIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor side of a gradient-sharing fit: one Spark task is one worker node. It connects to
 * the driver's relay (downloading the current parameters and counters, so a task that Spark re-runs
 * resumes the fit), trains {@code workersPerNode} replicas on this partition's minibatches of
 * exactly {@code batchSizePerWorker} examples, and returns its reports once the driver has applied
 * everything it sent. Native handles are released before the task ends, whatever happens.
 */
public final class SharedTrainingWorker<B>
        implements Function2<Integer, Iterator<B>, Iterator<SharedWorkerResult>>, TrainingWorker<SharedWorkerResult> {
    private static final long serialVersionUID = 2L;
    private static final Logger LOG = LoggerFactory.getLogger(SharedTrainingWorker.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final NetworkKind<?, B> kind;
    /** The fit's settings (a worker of a fit), or null (a worker from getWorkerInstance). */
    private final SharedFitSpec<B> spec;
    /** The network at getWorkerInstance (a worker from getWorkerInstance), or null. */
    private final Broadcast<? extends NetworkSnapshot<?>> initial;
    private final WorkerConfiguration configuration;
    private final long instanceId;

    SharedTrainingWorker(NetworkKind<?, B> kind, SharedFitSpec<B> spec) {
        this.kind = kind;
        this.spec = spec;
        this.initial = null;
        this.configuration = null;
        this.instanceId = 0;
    }

    /** The worker {@code SharedTrainingMaster.getWorkerInstance} returns. */
    SharedTrainingWorker(NetworkKind<?, B> kind, Broadcast<? extends NetworkSnapshot<?>> initial,
                         WorkerConfiguration configuration, long instanceId) {
        this.kind = kind;
        this.spec = null;
        this.initial = initial;
        this.configuration = configuration;
        this.instanceId = instanceId;
    }

    @Override
    public NetworkKind<?, ?> getNetworkKind() {
        return kind;
    }

    // ------------------------------------------------- the reference's TrainingWorker methods

    @Override
    public MultiLayerNetwork getInitialModel() {
        return (MultiLayerNetwork) initialModel(NetworkKind.MULTI_LAYER, "getInitialModel()");
    }

    @Override
    public ComputationGraph getInitialModelGraph() {
        return (ComputationGraph) initialModel(NetworkKind.GRAPH, "getInitialModelGraph()");
    }

    /** A new network with the parameters and updater state this worker starts from; the caller closes it. */
    private Object initialModel(NetworkKind<?, ?> wanted, String method) {
        if (kind != wanted) {
            throw new IllegalStateException("SharedTrainingWorker." + method + ": this worker trains a "
                    + kind.networkName() + ", not a " + wanted.networkName());
        }
        if (initial == null) {
            // a fit's worker takes its parameters from the fit's relay when its task connects
            throw new IllegalStateException("SharedTrainingWorker." + method + ": this is a worker of a running "
                    + "fit, which starts from the relay's state when its task connects; use the worker "
                    + "SharedTrainingMaster.getWorkerInstance returns");
        }
        return initial.value().restore();
    }

    /**
     * Why the minibatch methods refuse (as the reference's gradient-sharing worker does): a
     * replica's updates are encoded and exchanged through the relay the driver starts for a fit,
     * so training happens only inside {@code SharedTrainingMaster.executeTraining} (one Spark task
     * per worker node, connected to that relay).
     */
    private static UnsupportedOperationException trainsOnlyInAFit(String method) {
        return new UnsupportedOperationException("SharedTrainingWorker." + method + ": gradient sharing trains "
                + "only inside a fit (SparkDl4jMultiLayer/SparkComputationGraph.fit with a SharedTrainingMaster), "
                + "where each Spark task connects to the relay the driver starts for that fit; a worker from "
                + "getWorkerInstance gives the initial model and the data configuration");
    }

    @Override
    public SharedWorkerResult processMinibatch(DataSet dataSet, MultiLayerNetwork network, boolean isLast) {
        throw trainsOnlyInAFit("processMinibatch");
    }

    @Override
    public SharedWorkerResult processMinibatch(DataSet dataSet, ComputationGraph graph, boolean isLast) {
        throw trainsOnlyInAFit("processMinibatch");
    }

    @Override
    public SharedWorkerResult processMinibatch(MultiDataSet dataSet, ComputationGraph graph, boolean isLast) {
        throw trainsOnlyInAFit("processMinibatch");
    }

    @Override
    public Pair<SharedWorkerResult, SparkTrainingStats> processMinibatchWithStats(DataSet dataSet,
                                                                                MultiLayerNetwork network,
                                                                                boolean isLast) {
        throw trainsOnlyInAFit("processMinibatchWithStats");
    }

    @Override
    public Pair<SharedWorkerResult, SparkTrainingStats> processMinibatchWithStats(DataSet dataSet,
                                                                                ComputationGraph graph,
                                                                                boolean isLast) {
        throw trainsOnlyInAFit("processMinibatchWithStats");
    }

    @Override
    public Pair<SharedWorkerResult, SparkTrainingStats> processMinibatchWithStats(MultiDataSet dataSet,
                                                                                ComputationGraph graph,
                                                                                boolean isLast) {
        throw trainsOnlyInAFit("processMinibatchWithStats");
    }

    @Override
    public SharedWorkerResult getFinalResult(MultiLayerNetwork network) {
        throw trainsOnlyInAFit("getFinalResult");
    }

    @Override
    public SharedWorkerResult getFinalResult(ComputationGraph graph) {
        throw trainsOnlyInAFit("getFinalResult");
    }

    @Override
    public SharedWorkerResult getFinalResultNoData() {
        throw trainsOnlyInAFit("getFinalResultNoData");
    }

    @Override
    public Pair<SharedWorkerResult, SparkTrainingStats> getFinalResultNoDataWithStats() {
        throw trainsOnlyInAFit("getFinalResultNoDataWithStats");
    }

    @Override
    public Pair<SharedWorkerResult, SparkTrainingStats> getFinalResultWithStats(MultiLayerNetwork network) {
        throw trainsOnlyInAFit("getFinalResultWithStats");
    }

    @Override
    public Pair<SharedWorkerResult, SparkTrainingStats> getFinalResultWithStats(ComputationGraph graph) {
        throw trainsOnlyInAFit("getFinalResultWithStats");
    }

    /** Hooks are the master's ({@code SharedTrainingMaster.addHook}): they reach the replicas of its fits. */
    @Override
    public void addHook(TrainingHook trainingHook) {
        throw new UnsupportedOperationException("SharedTrainingWorker.addHook: add hooks to the "
                + "SharedTrainingMaster (addHook); its fits run them around every replica's minibatches");
    }

    /** @see #addHook */
    @Override
    public void removeHook(TrainingHook trainingHook) {
        throw new UnsupportedOperationException("SharedTrainingWorker.removeHook: remove hooks from the "
                + "SharedTrainingMaster (removeHook)");
    }

    @Override
    public WorkerConfiguration getDataConfiguration() {
        if (configuration != null) {
            return configuration;
        }
        SharedFitSpec<B> s = spec;
        return new WorkerConfiguration(kind.isGraph(), 0, s.batchSizePerWorker, 0, s.prefetchNumBatches,
                s.collectStats);
    }

    @Override
    public long getInstanceId() {
        return instanceId;
    }

    @Override
    public Iterator<SharedWorkerResult> call(Integer partition, Iterator<B> data) throws Exception {
        long start = System.currentTimeMillis();
        long t0 = System.nanoTime();
        if (!data.hasNext()) {
            return Collections.emptyIterator();
        }
        SharedFitSpec<B> s = spec;
        TaskContext task = TaskContext.get();
        int attempt = task == null ? 0 : task.attemptNumber();
        String executor = executorId();
        long firstDataNanos = System.nanoTime() - t0;
        t0 = System.nanoTime();

        Iterator<B> batches = new BatchAssembler<>(data, s.batchSizePerWorker, kind);
        PrefetchingIterator<B> prefetch = s.prefetchNumBatches > 0
                ? new PrefetchingIterator<>(batches, s.prefetchNumBatches, "ferrodl-prefetch-p" + partition) : null;
        Iterator<B> source = prefetch != null ? prefetch : batches;

        long[] handles = NativeSharedWorker.connect(configJson(s, partition, attempt));
        long connectNanos = System.nanoTime() - t0;
        TaskThreads.configure(handles.length - 1);
        LOG.info("ferrodl-worker-start executor={} partition={} attempt={} relay={}", executor, partition, attempt,
                s.relayAddress);
        Progress progress = new Progress();
        Thread watchdog = watchdog(progress, handles[0], s.stallTimeoutMs,
                "executor " + executor + " on host " + host() + " (partition " + partition + ", attempt " + attempt
                        + (task == null ? "" : ", Spark task " + task.taskAttemptId()) + ")");
        try {
            int replicas = handles.length - 1;
            long[][] trained = new long[replicas][];
            if (replicas == 1) {
                trained[0] = trainReplica(kind, handles[1], source, partition, 0, s, progress);
            } else {
                ExecutorService pool = Executors.newFixedThreadPool(replicas, r -> {
                    Thread t = new Thread(r, "ferrodl-replica-p" + partition);
                    t.setDaemon(true);
                    return t;
                });
                try {
                    List<Future<long[]>> done = new ArrayList<>();
                    for (int i = 0; i < replicas; i++) {
                        final int replica = i;
                        done.add(pool.submit(() -> trainReplica(kind, handles[1 + replica], source, partition,
                                replica, s, progress)));
                    }
                    for (int i = 0; i < replicas; i++) {
                        trained[i] = done.get(i).get();
                    }
                } finally {
                    pool.shutdownNow();
                }
            }
            progress.set("waiting for the driver to apply this task's last updates");
            long t1 = System.nanoTime();
            // the replicas' updater states go to the driver with the relay's FINISH (not in the task
            // result: above Spark's 1 MB direct-result size it is fetched through the block manager)
            String nodeReport = NativeSharedWorker.finish(handles[0],
                    java.util.Arrays.copyOfRange(handles, 1, handles.length));
            long finishNanos = System.nanoTime() - t1;
            t1 = System.nanoTime();
            List<String> reports = new ArrayList<>(replicas);
            long total = 0;
            long examples = 0;
            for (int i = 0; i < replicas; i++) {
                reports.add(NativeSharedWorker.replicaReport(handles[1 + i]));
                total += trained[i][0];
                examples += trained[i][1];
            }
            long resultNanos = System.nanoTime() - t1;
            long millis = System.currentTimeMillis() - start;
            LOG.info("ferrodl-worker executor={} partition={} attempt={} minibatches={} replicas={} millis={} {}",
                    executor, partition, attempt, total, replicas, millis, nodeReport);
            return Collections.singletonList(new SharedWorkerResult(partition, attempt, executor, millis,
                    nodeReport, reports, total, examples, start, firstDataNanos, connectNanos,
                    progress.dataNanos.get(), progress.fitCallNanos.get(), finishNanos, resultNanos)).iterator();
        } finally {
            watchdog.interrupt();
            if (prefetch != null) {
                prefetch.close();
            }
            for (int i = 1; i < handles.length; i++) {
                NativeSharedWorker.destroyReplica(handles[i]);
            }
            NativeSharedWorker.destroyNode(handles[0]);
        }
    }

    /** What the task did last and when it last changed (read by the watchdog). */
    static final class Progress {
        private volatile String activity = "connected to the relay";
        private volatile long sinceNanos = System.nanoTime();
        private final AtomicLong trained = new AtomicLong();
        /** Summed over replicas: waiting for the data source; inside the native training call. */
        final AtomicLong dataNanos = new AtomicLong();
        final AtomicLong fitCallNanos = new AtomicLong();

        void set(String what) {
            activity = what;
            sinceNanos = System.nanoTime();
        }

        long trained() {
            return trained.get();
        }
    }

    /**
     * Reports a stall to the driver (through the relay) once the task has made no progress for
     * {@code timeoutMs}; reports again only after progress resumed and stalled anew.
     */
    private static Thread watchdog(Progress progress, long node, long timeoutMs, String who) {
        Thread t = new Thread(() -> {
            long reportedFor = -1;
            long tick = Math.max(10, Math.min(1000, timeoutMs / 4));
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(tick);
                } catch (InterruptedException e) {
                    return;
                }
                long since = progress.sinceNanos;
                long idleMs = (System.nanoTime() - since) / 1_000_000;
                if (idleMs >= timeoutMs && since != reportedFor) {
                    reportedFor = since;
                    String report = who + ": no progress for " + idleMs + " ms (workerStallTimeoutMs " + timeoutMs
                            + "); last: " + progress.activity + " (" + progress.trained() + " minibatches trained)";
                    LOG.error("ferrodl-worker-stall {}", report);
                    try {
                        NativeSharedWorker.reportStall(node, report);
                    } catch (RuntimeException e) {
                        LOG.warn("ferrodl-worker-stall could not be reported to the driver: {}", e.getMessage());
                    }
                }
            }
        }, "ferrodl-watchdog-" + who.replaceAll("[^A-Za-z0-9]+", "-"));
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static String host() {
        SparkEnv env = SparkEnv.get();
        if (env != null && env.blockManager() != null && env.blockManager().blockManagerId() != null) {
            return env.blockManager().blockManagerId().host();
        }
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    /**
     * Fits minibatches taken from the shared source until it is exhausted; returns how many and
     * their examples.
     */
    private static <B> long[] trainReplica(NetworkKind<?, B> kind, long replica, Iterator<B> source, int partition,
                                           int index, SharedFitSpec<B> s, Progress progress) throws Exception {
        long n = 0;
        long examples = 0;
        ReplicaModel model = new ReplicaModel(replica, s.paramCount, s.listeners);
        long startIteration = 0;
        long epoch = 0;
        if (model.hasListeners()) {
            // the counters this replica starts from (the fit's, or the driver's current ones on a re-run)
            JsonNode report = JSON.readTree(NativeSharedWorker.replicaReport(replica));
            startIteration = report.path("iteration").asLong();
            epoch = report.path("epoch").asLong();
        }
        while (true) {
            B batch;
            long t = System.nanoTime();
            synchronized (source) {
                progress.set("waiting for minibatch " + (progress.trained() + 1) + " from the data source");
                if (!source.hasNext()) {
                    progress.dataNanos.addAndGet(System.nanoTime() - t);
                    return new long[] {n, examples};
                }
                batch = source.next();
            }
            progress.dataNanos.addAndGet(System.nanoTime() - t);
            progress.set("training minibatch " + (progress.trained() + 1) + " (replica " + index + ")");
            for (TrainingHook h : s.hooks) {
                kind.preUpdate(h, batch, model);
            }
            t = System.nanoTime();
            double score = kind.sharedFit(replica, batch);
            progress.fitCallNanos.addAndGet(System.nanoTime() - t);
            if (!s.hooks.isEmpty()) {
                model.fitted(score, kind.numExamples(batch));
                for (TrainingHook h : s.hooks) {
                    kind.postUpdate(h, batch, model);
                }
            }
            int rows = kind.numExamples(batch);
            if (model.hasListeners()) {
                model.iterationDone(score, rows, startIteration + n, epoch);
            }
            n++;
            examples += rows;
            progress.trained.incrementAndGet();
            progress.set("trained minibatch " + progress.trained() + " (replica " + index + ")");
            if (s.encodingDebugMode) {
                LOG.info("ferrodl-encoding partition={} replica={} minibatch={} {}", partition, index, n,
                        NativeSharedWorker.debugStats(replica));
            }
        }
    }

    static String configJson(SharedFitSpec<?> s, int partition, int attempt) throws Exception {
        ObjectNode c = JSON.createObjectNode();
        c.put("network", s.networkJson);
        c.put("graph", s.kind.isGraph());
        c.put("relayAddress", s.relayAddress);
        c.put("secretHex", s.secretHex);
        c.put("partition", partition);
        c.put("attempt", attempt);
        c.put("replicas", s.replicasPerWorker);
        c.set("thresholdAlgorithm", JSON.readTree(s.thresholdAlgorithmJson));
        c.set("residualPostProcessor", JSON.readTree(s.residualPostProcessorJson));
        c.set("thresholdState", s.thresholdStateJson == null ? null : JSON.readTree(s.thresholdStateJson));
        c.put("connectTimeoutMs", s.connectTimeoutMs);
        c.put("ioTimeoutMs", s.ioTimeoutMs);
        c.put("queueLimit", s.queueLimit);
        c.put("maxMessageBytes", s.maxMessageBytes);
        c.put("collectStats", s.collectStats);
        c.put("debugLongerIterationsMs", s.debugLongerIterationsMs);
        c.put("encrypt", s.encrypt);
        return JSON.writeValueAsString(c);
    }

    static String executorId() {
        SparkEnv env = SparkEnv.get();
        return env == null ? "unknown" : env.executorId();
    }
}
