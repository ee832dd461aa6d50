package org.ferrodl.spark.parameterserver.training;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.core.loader.MultiDataSetLoader;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.optimize.solvers.accumulation.encoding.ResidualPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.NoOpResidualPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.ResidualClippingPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.FixedThresholdAlgorithm;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.api.Repartitioner;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.api.WorkerConfiguration;
import org.ferrodl.spark.impl.common.HadoopConf;
import org.ferrodl.spark.impl.common.LoadFunctions;
import org.ferrodl.spark.impl.common.MasterSerde;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.SparkListeners;
import org.ferrodl.spark.impl.common.SparkNetwork;
import org.ferrodl.spark.impl.common.StorageLevels;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.repartitioner.DefaultRepartitioner;

/**
 * Distributed training with threshold-encoded update sharing (Strom, Interspeech 2015): every
 * worker adds its update (the optimizer's output) to a residual, sends only the entries at or
 * above the current threshold as ±threshold, and keeps the rest for later. Updates travel through
 * an authenticated TCP relay that the driver starts for each fit; the driver applies every message
 * to its master copy of the parameters, which becomes the network at the end of the fit. A task
 * that Spark re-runs downloads the current parameters and counters before training.
 *
 * <p>Trains {@code SparkDl4jMultiLayer} and {@code SparkComputationGraph} alike (the replicas in the
 * engine are layer chains or graphs). The wrapper's listeners are called on the workers after every
 * minibatch of every replica, with a read-only view of the replica (docs/ARCHITECTURE.md §9.1).
 *
 * <p>Configuration objects are immutable and serializable (they are shipped to executors); they
 * round-trip through {@link #toJson()} / {@link #fromJson(String)} and YAML.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY, getterVisibility = JsonAutoDetect.Visibility.NONE,
        isGetterVisibility = JsonAutoDetect.Visibility.NONE, setterVisibility = JsonAutoDetect.Visibility.NONE)
@JsonInclude(JsonInclude.Include.ALWAYS)
public class SharedTrainingMaster implements TrainingMaster<SharedWorkerResult, SharedTrainingWorker<?>> {
    private static final long serialVersionUID = 1L;

    private int rddDataSetNumExamples;
    private int batchSizePerWorker = 16;
    private int workersPerNode = -1;
    private int workerPrefetchNumBatches = 2;
    private ThresholdAlgorithm thresholdAlgorithm = new AdaptiveThresholdAlgorithm();
    private ResidualPostProcessor residualPostProcessor = new ResidualClippingPostProcessor(5.0, 5);
    private Repartitioner repartitioner = new DefaultRepartitioner();
    private Repartition repartition = Repartition.Always;
    private RepartitionStrategy repartitionStrategy = RepartitionStrategy.Balanced;
    private String storageLevel = "MEMORY_ONLY_SER";
    private RDDTrainingApproach rddTrainingApproach = RDDTrainingApproach.Export;
    private String exportDirectory;
    private Long rngSeed;
    private boolean collectTrainingStats;
    private boolean encodingDebugMode;
    private long debugLongerIterations;
    private boolean workerTogglePeriodicGC = true;
    private int workerPeriodicGCFrequency = 5000;
    private int[] relayPortRange;
    private String relayBindAddress;
    private int relayQueueLimit = 64;
    private long relayTimeoutMs = 60_000;
    private boolean relayAllowWithoutSparkAuthentication;
    private long workerStallTimeoutMs = DEFAULT_WORKER_STALL_TIMEOUT_MS;
    private List<TrainingHook> trainingHooks = new ArrayList<>();

    /** Default of {@link Builder#workerStallTimeoutMs(long)}: 5 minutes. */
    public static final long DEFAULT_WORKER_STALL_TIMEOUT_MS = 300_000;

    @JsonIgnore
    private transient SparkTrainingStats lastStats;
    @JsonIgnore
    private transient List<TrainingListener> listeners = List.of();
    /** Partition sizes of the last persisted RDD trained on (the next epoch's fit reuses them). */
    @JsonIgnore
    private transient PersistedSizes persistedSizes;

    private record PersistedSizes(int rddId, org.apache.spark.SparkContext sc, long[] sizes) {
    }

    /**
     * The partition sizes of {@code rdd}, an RDD the user persisted: counted by one Spark job the
     * first time, then remembered for the next fit of the same RDD (a persisted RDD's content does
     * not change; counting it again cost two Spark jobs per epoch, about 250-900 ms on 2 cores).
     */
    synchronized long[] persistedPartitionSizes(JavaRDD<?> rdd) {
        PersistedSizes p = persistedSizes;
        if (p != null && p.rddId() == rdd.id() && p.sc() == rdd.context()) {
            return p.sizes();
        }
        long[] sizes = DefaultRepartitioner.partitionSizes(rdd);
        persistedSizes = new PersistedSizes(rdd.id(), rdd.context(), sizes);
        return sizes;
    }

    private SharedTrainingMaster() {
        // for Jackson
    }

    private SharedTrainingMaster(Builder b) {
        this.rddDataSetNumExamples = b.rddDataSetNumExamples;
        this.batchSizePerWorker = b.batchSizePerWorker;
        this.workersPerNode = b.workersPerNode;
        this.workerPrefetchNumBatches = b.workerPrefetchNumBatches;
        this.thresholdAlgorithm = b.thresholdAlgorithm;
        this.residualPostProcessor = b.residualPostProcessor;
        this.repartitioner = b.repartitioner;
        this.repartition = b.repartition;
        this.repartitionStrategy = b.repartitionStrategy;
        this.storageLevel = StorageLevels.name(b.storageLevel);
        this.rddTrainingApproach = b.rddTrainingApproach;
        this.exportDirectory = b.exportDirectory;
        this.rngSeed = b.rngSeed;
        this.collectTrainingStats = b.collectTrainingStats;
        this.encodingDebugMode = b.encodingDebugMode;
        this.debugLongerIterations = b.debugLongerIterations;
        this.workerTogglePeriodicGC = b.workerTogglePeriodicGC;
        this.workerPeriodicGCFrequency = b.workerPeriodicGCFrequency;
        this.relayPortRange = b.relayPortRange;
        this.relayBindAddress = b.relayBindAddress;
        this.relayQueueLimit = b.relayQueueLimit;
        this.relayTimeoutMs = b.relayTimeoutMs;
        this.relayAllowWithoutSparkAuthentication = b.relayAllowWithoutSparkAuthentication;
        this.workerStallTimeoutMs = b.workerStallTimeoutMs;
    }

    @Override
    public void executeTraining(SparkDl4jMultiLayer network, JavaRDD<DataSet> trainingData) {
        lastStats = SharedTrainingDriver.run(this, network, trainingData);
    }

    @Override
    public void executeTraining(SparkComputationGraph graph, JavaRDD<DataSet> trainingData) {
        lastStats = SharedTrainingDriver.run(this, graph, trainingData.map(MultiDataSet::fromDataSet));
    }

    @Override
    public void executeTrainingMDS(SparkComputationGraph graph, JavaRDD<MultiDataSet> trainingData) {
        lastStats = SharedTrainingDriver.run(this, graph, trainingData);
    }

    /** Trains from the stored files directly (they are not exported again), repartitioned as data would be. */
    @Override
    public void executeTrainingPaths(SparkDl4jMultiLayer network, SparkComputationGraph graph, JavaRDD<String> paths,
                                     DataSetLoader dsLoader, MultiDataSetLoader mdsLoader) {
        LoadFunctions.requireOneNetwork(network, graph);
        if (network != null) {
            Function<String, DataSet> load = LoadFunctions.loading(Objects.requireNonNull(dsLoader, "dsLoader"),
                    HadoopConf.of(network.getSparkContext()));
            lastStats = SharedTrainingDriver.runPaths(this, network, paths, it -> mapped(it, load));
        } else {
            Function<String, MultiDataSet> load = LoadFunctions.graphLoading(dsLoader, mdsLoader,
                    HadoopConf.of(graph.getSparkContext()));
            lastStats = SharedTrainingDriver.runPaths(this, graph, paths, it -> mapped(it, load));
        }
    }

    /** {@code paths} loaded one at a time as the worker asks for them. */
    private static <B> Iterator<B> mapped(Iterator<String> paths, Function<String, B> load) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return paths.hasNext();
            }

            @Override
            public B next() {
                String path = paths.next();
                try {
                    return load.call(path);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("cannot load " + path + ": " + e.getMessage(), e);
                }
            }
        };
    }

    // ------------------------------------------------------------ hooks, listeners, worker instances

    /**
     * Adds a hook run on every worker around each minibatch update; under gradient sharing its
     * model is the replica's read-only view (score and size of the minibatch, {@code params()}),
     * as listeners see it. Hooks travel in the master's JSON/YAML by class name.
     */
    @Override
    public void addHook(TrainingHook trainingHook) {
        trainingHooks.add(Objects.requireNonNull(trainingHook, "trainingHook"));
    }

    /** Removes a hook (the first equal one); does nothing when it is not present. */
    @Override
    public void removeHook(TrainingHook trainingHook) {
        trainingHooks.remove(trainingHook);
    }

    /** The hooks, in call order (read-only). */
    public List<TrainingHook> getTrainingHooks() {
        return Collections.unmodifiableList(trainingHooks);
    }

    /**
     * Listeners called after each minibatch of every replica, after the wrapper's own; each must be
     * serializable. Not part of the JSON.
     */
    @Override
    public void setListeners(Collection<TrainingListener> listeners) {
        this.listeners = SparkListeners.checked(listeners);
    }

    /** The listeners given to {@link #setListeners} (read-only). */
    List<TrainingListener> getWorkerListeners() {
        return listeners == null ? List.of() : listeners;
    }

    /**
     * A worker for {@code network} as the reference's: {@code getInitialModel()} rebuilds the
     * network from its parameters and updater state broadcast now, and {@code getDataConfiguration()}
     * describes the minibatches; training itself runs only inside a fit (each Spark task connects
     * to the relay the driver starts for that fit), so the minibatch methods refuse, as the
     * reference's do.
     */
    @Override
    public SharedTrainingWorker<?> getWorkerInstance(SparkDl4jMultiLayer network) {
        return workerInstance(Objects.requireNonNull(network, "network"));
    }

    /** As {@link #getWorkerInstance(SparkDl4jMultiLayer)} for a graph. */
    @Override
    public SharedTrainingWorker<?> getWorkerInstance(SparkComputationGraph graph) {
        return workerInstance(Objects.requireNonNull(graph, "graph"));
    }

    private <N extends NativeHandleOwner & Model, B> SharedTrainingWorker<B> workerInstance(
            SparkNetwork<N, B> sparkNetwork) {
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();
        Broadcast<NetworkSnapshot<N>> snapshot = sparkNetwork.getSparkContext()
                .broadcast(NetworkSnapshot.of(kind, sparkNetwork.getNetwork(), true));
        return new SharedTrainingWorker<>(kind, snapshot, new WorkerConfiguration(kind.isGraph(),
                rddDataSetNumExamples, batchSizePerWorker, 0, workerPrefetchNumBatches, collectTrainingStats),
                INSTANCES.incrementAndGet());
    }

    /** Numbers the worker instances handed out in this JVM. */
    private static final java.util.concurrent.atomic.AtomicLong INSTANCES = new java.util.concurrent.atomic.AtomicLong();

    // ------------------------------------------------------------------------- configuration API

    public int getRddDataSetNumExamples() {
        return rddDataSetNumExamples;
    }

    public int getBatchSizePerWorker() {
        return batchSizePerWorker;
    }

    /** Replicas per worker task; -1 (the default) means automatic, which is 1 on CPU executors. */
    public int getWorkersPerNode() {
        return workersPerNode;
    }

    public int getWorkerPrefetchNumBatches() {
        return workerPrefetchNumBatches;
    }

    public ThresholdAlgorithm getThresholdAlgorithm() {
        return thresholdAlgorithm;
    }

    public ResidualPostProcessor getResidualPostProcessor() {
        return residualPostProcessor;
    }

    /** Null: the data is trained in its given partitioning. */
    public Repartitioner getRepartitioner() {
        return repartitioner;
    }

    /** @deprecated kept for the reference's API; {@link #getRepartitioner()} decides. */
    @Deprecated
    public Repartition getRepartition() {
        return repartition;
    }

    /** @deprecated kept for the reference's API; {@link #getRepartitioner()} decides. */
    @Deprecated
    public RepartitionStrategy getRepartitionStrategy() {
        return repartitionStrategy;
    }

    /** Null: no persistence (only used with {@link RDDTrainingApproach#Direct}). */
    public StorageLevel getStorageLevel() {
        return StorageLevels.fromName(storageLevel);
    }

    public RDDTrainingApproach getRddTrainingApproach() {
        return rddTrainingApproach;
    }

    /** Null: {@code ${hadoop.tmp.dir}/ferrodl}. */
    public String getExportDirectory() {
        return exportDirectory;
    }

    public Long getRngSeed() {
        return rngSeed;
    }

    public boolean isEncodingDebugMode() {
        return encodingDebugMode;
    }

    /** Milliseconds each worker sleeps after every iteration (debugging only). */
    public long getDebugLongerIterations() {
        return debugLongerIterations;
    }

    /** Accepted for compatibility: ferrodl keeps no off-heap memory that a periodic GC would free. */
    public boolean isWorkerTogglePeriodicGC() {
        return workerTogglePeriodicGC;
    }

    /** Accepted for compatibility; see {@link #isWorkerTogglePeriodicGC()}. */
    public int getWorkerPeriodicGCFrequency() {
        return workerPeriodicGCFrequency;
    }

    /** {@code [from, to]} inclusive, or null for any free port. */
    public int[] getRelayPortRange() {
        return relayPortRange == null ? null : relayPortRange.clone();
    }

    /** Address the relay binds to and workers connect to; null: all interfaces, advertised as spark.driver.host. */
    public String getRelayBindAddress() {
        return relayBindAddress;
    }

    public int getRelayQueueLimit() {
        return relayQueueLimit;
    }

    public long getRelayTimeoutMs() {
        return relayTimeoutMs;
    }

    /** See {@link Builder#relayAllowWithoutSparkAuthentication(boolean)}. */
    public boolean isRelayAllowWithoutSparkAuthentication() {
        return relayAllowWithoutSparkAuthentication;
    }

    /** See {@link Builder#workerStallTimeoutMs(long)}. */
    public long getWorkerStallTimeoutMs() {
        return workerStallTimeoutMs;
    }

    @Override
    public void setCollectTrainingStats(boolean collectTrainingStats) {
        this.collectTrainingStats = collectTrainingStats;
    }

    @Override
    public boolean getIsCollectTrainingStats() {
        return collectTrainingStats;
    }

    /** Statistics of the last fit (per worker, per replica step, relay counters), or null when not collected. */
    @Override
    public SparkTrainingStats getTrainingStats() {
        return collectTrainingStats ? lastStats : null;
    }

    // ---------------------------------------------------------------------------- serialization

    @Override
    public String toJson() {
        return MasterSerde.toJson(this);
    }

    @Override
    public String toYaml() {
        return MasterSerde.toYaml(this);
    }

    /** Reads a master written by {@link #toJson()}; unknown or invalid fields are refused. */
    public static SharedTrainingMaster fromJson(String jsonStr) {
        return MasterSerde.fromJson(jsonStr, SharedTrainingMaster.class).validated("JSON");
    }

    /** Reads a master written by {@link #toYaml()}; unknown or invalid fields are refused. */
    public static SharedTrainingMaster fromYaml(String yamlStr) {
        return MasterSerde.fromYaml(yamlStr, SharedTrainingMaster.class).validated("YAML");
    }

    /** Applies the builder's checks to a deserialized master (nothing else may construct one). */
    private SharedTrainingMaster validated(String format) {
        try {
            Builder.check(rddDataSetNumExamples > 0, "rddDataSetNumExamples", rddDataSetNumExamples, ">= 1");
            StorageLevel level = null;
            try {
                level = StorageLevels.fromName(storageLevel);
            } catch (IllegalArgumentException e) {
                Builder.check(false, "storageLevel", storageLevel, "a Spark storage level name such as MEMORY_ONLY_SER, or null");
            }
            Builder b = new Builder(rddDataSetNumExamples)
                    .batchSizePerWorker(batchSizePerWorker)
                    .workersPerNode(workersPerNode)
                    .workerPrefetchNumBatches(workerPrefetchNumBatches)
                    .thresholdAlgorithm(thresholdAlgorithm)
                    .repartitionData(repartition)
                    .repartitionStrategy(repartitionStrategy)
                    .storageLevel(level)
                    .rddTrainingApproach(rddTrainingApproach)
                    .exportDirectory(exportDirectory)
                    .debugLongerIterations(debugLongerIterations)
                    .workerPeriodicGCFrequency(workerPeriodicGCFrequency)
                    .relayBindAddress(relayBindAddress)
                    .relayQueueLimit(relayQueueLimit)
                    .relayTimeoutMs(relayTimeoutMs)
                    .relayAllowWithoutSparkAuthentication(relayAllowWithoutSparkAuthentication)
                    .workerStallTimeoutMs(workerStallTimeoutMs);
            Builder.check(trainingHooks != null && !trainingHooks.contains(null), "trainingHooks", trainingHooks,
                    "a list of hooks without nulls");
            trainingHooks = new ArrayList<>(trainingHooks);
            Builder.check(residualPostProcessor != null, "residualPostProcessor", null,
                    "not null; use {type: noop} for no post-processing");
            if (relayPortRange != null) {
                Builder.check(relayPortRange.length == 2, "relayPortRange", Arrays.toString(relayPortRange),
                        "[from, to] or null");
                b.relayPortRange(relayPortRange[0], relayPortRange[1]);
            }
        } catch (IllegalArgumentException e) {
            throw new DL4JInvalidConfigException("invalid SharedTrainingMaster " + format + ": " + e.getMessage(), e);
        }
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SharedTrainingMaster m)) {
            return false;
        }
        return rddDataSetNumExamples == m.rddDataSetNumExamples && batchSizePerWorker == m.batchSizePerWorker
                && workersPerNode == m.workersPerNode && workerPrefetchNumBatches == m.workerPrefetchNumBatches
                && Objects.equals(thresholdAlgorithm, m.thresholdAlgorithm)
                && Objects.equals(residualPostProcessor, m.residualPostProcessor)
                && Objects.equals(repartitioner, m.repartitioner) && repartition == m.repartition
                && repartitionStrategy == m.repartitionStrategy && Objects.equals(storageLevel, m.storageLevel)
                && rddTrainingApproach == m.rddTrainingApproach && Objects.equals(exportDirectory, m.exportDirectory)
                && Objects.equals(rngSeed, m.rngSeed) && collectTrainingStats == m.collectTrainingStats
                && encodingDebugMode == m.encodingDebugMode && debugLongerIterations == m.debugLongerIterations
                && workerTogglePeriodicGC == m.workerTogglePeriodicGC
                && workerPeriodicGCFrequency == m.workerPeriodicGCFrequency
                && Arrays.equals(relayPortRange, m.relayPortRange) && Objects.equals(relayBindAddress, m.relayBindAddress)
                && relayQueueLimit == m.relayQueueLimit && relayTimeoutMs == m.relayTimeoutMs
                && relayAllowWithoutSparkAuthentication == m.relayAllowWithoutSparkAuthentication
                && workerStallTimeoutMs == m.workerStallTimeoutMs && Objects.equals(trainingHooks, m.trainingHooks);
    }

    @Override
    public int hashCode() {
        return Objects.hash(rddDataSetNumExamples, batchSizePerWorker, workersPerNode, workerPrefetchNumBatches,
                thresholdAlgorithm, residualPostProcessor, repartitioner, repartition, repartitionStrategy,
                storageLevel, rddTrainingApproach, exportDirectory, rngSeed, collectTrainingStats, encodingDebugMode,
                debugLongerIterations, workerTogglePeriodicGC, workerPeriodicGCFrequency,
                Arrays.hashCode(relayPortRange), relayBindAddress, relayQueueLimit, relayTimeoutMs,
                relayAllowWithoutSparkAuthentication, workerStallTimeoutMs, trainingHooks);
    }

    @Override
    public String toString() {
        return "SharedTrainingMaster" + toJson();
    }

    /**
     * Builder with every option of the reference's {@code SharedTrainingMaster.Builder} and its
     * defaults, plus ferrodl's relay options. Every setter validates its argument and throws an
     * {@link IllegalArgumentException} naming the option and the bad value. The reference's
     * {@code transport(Transport)} and {@code VoidConfiguration} constructors configure its Aeron
     * transport and have no equivalent: ferrodl's TCP relay is configured with the {@code relay*}
     * options.
     */
    public static class Builder {
        private final int rddDataSetNumExamples;
        private int batchSizePerWorker = 16;
        private int workersPerNode = -1;
        private int workerPrefetchNumBatches = 2;
        private ThresholdAlgorithm thresholdAlgorithm = new AdaptiveThresholdAlgorithm();
        private ResidualPostProcessor residualPostProcessor = new ResidualClippingPostProcessor(5.0, 5);
        private Repartitioner repartitioner = new DefaultRepartitioner();
        private Repartition repartition = Repartition.Always;
        private RepartitionStrategy repartitionStrategy = RepartitionStrategy.Balanced;
        private StorageLevel storageLevel = StorageLevel.MEMORY_ONLY_SER();
        private RDDTrainingApproach rddTrainingApproach = RDDTrainingApproach.Export;
        private String exportDirectory;
        private Long rngSeed;
        private boolean collectTrainingStats;
        private boolean encodingDebugMode;
        private long debugLongerIterations;
        private boolean workerTogglePeriodicGC = true;
        private int workerPeriodicGCFrequency = 5000;
        private int[] relayPortRange;
        private String relayBindAddress;
        private int relayQueueLimit = 64;
        private long relayTimeoutMs = 60_000;
        private boolean relayAllowWithoutSparkAuthentication;
        private long workerStallTimeoutMs = DEFAULT_WORKER_STALL_TIMEOUT_MS;

        /**
         * A master with every default but the number of examples per DataSet object.
         *
         * @param rddDataSetNumExamples examples in each DataSet object of the training RDD; at least 1
         */
        public Builder(int rddDataSetNumExamples) {
            check(rddDataSetNumExamples > 0, "rddDataSetNumExamples", rddDataSetNumExamples, ">= 1");
            this.rddDataSetNumExamples = rddDataSetNumExamples;
        }

        /**
         * @param thresholdAlgorithm    the encoding threshold algorithm (see {@link #thresholdAlgorithm})
         * @param rddDataSetNumExamples examples in each DataSet object of the training RDD; at least 1
         */
        public Builder(ThresholdAlgorithm thresholdAlgorithm, int rddDataSetNumExamples) {
            this(rddDataSetNumExamples);
            thresholdAlgorithm(thresholdAlgorithm);
        }

        /**
         * Same as the reference's deprecated {@code Builder(voidConfiguration, numWorkers, threshold,
         * rddDataSetNumExamples)}: an {@link AdaptiveThresholdAlgorithm} starting at {@code threshold}.
         *
         * @deprecated use {@link #Builder(ThresholdAlgorithm, int)}
         */
        @Deprecated
        public Builder(double threshold, int rddDataSetNumExamples) {
            this(new AdaptiveThresholdAlgorithm(threshold), rddDataSetNumExamples);
        }

        static void check(boolean ok, String option, Object value, String requirement) {
            if (!ok) {
                throw new IllegalArgumentException("SharedTrainingMaster option " + option + ": invalid value "
                        + value + " (must be " + requirement + ")");
            }
        }

        private static String quoted(String s) {
            return s == null ? "null" : "\"" + s + "\"";
        }

        /**
         * Minibatch size each worker trains on: DataSet objects are split or merged to it. Default 16
         * (the reference documents no default).
         */
        public Builder batchSizePerWorker(int batchSize) {
            check(batchSize > 0, "batchSizePerWorker", batchSize, ">= 1");
            this.batchSizePerWorker = batchSize;
            return this;
        }

        /**
         * Network replicas trained in parallel by each worker task, sharing one connection to the
         * relay. Default -1: automatic, which is 1 per executor task (ferrodl trains on CPU, where
         * Spark's task slots already give the parallelism; see the reference's advice on
         * {@code OMP_NUM_THREADS} when raising it).
         */
        public Builder workersPerNode(int numWorkers) {
            check(numWorkers == -1 || numWorkers >= 1, "workersPerNode", numWorkers, "-1 (automatic) or >= 1");
            this.workersPerNode = numWorkers;
            return this;
        }

        /** Minibatches prepared asynchronously ahead of training in each worker. Default 2; 0 disables prefetching. */
        public Builder workerPrefetchNumBatches(int prefetchNumBatches) {
            check(prefetchNumBatches >= 0, "workerPrefetchNumBatches", prefetchNumBatches, ">= 0");
            this.workerPrefetchNumBatches = prefetchNumBatches;
            return this;
        }

        /**
         * Algorithm that picks the encoding threshold at each step; lower thresholds send more
         * entries. Default: {@code new AdaptiveThresholdAlgorithm()} (1e-4, keeping the fraction of
         * entries sent within [1e-4, 1e-2]).
         */
        public Builder thresholdAlgorithm(ThresholdAlgorithm thresholdAlgorithm) {
            check(thresholdAlgorithm != null, "thresholdAlgorithm", null, "not null");
            this.thresholdAlgorithm = thresholdAlgorithm;
            return this;
        }

        /**
         * Same as the reference: {@code thresholdAlgorithm(new AdaptiveThresholdAlgorithm(updatesThreshold))},
         * an adaptive threshold that starts at {@code updatesThreshold} (not a fixed one; use
         * {@link FixedThresholdAlgorithm} for that).
         *
         * @deprecated use {@link #thresholdAlgorithm(ThresholdAlgorithm)}
         */
        @Deprecated
        public Builder updatesThreshold(double updatesThreshold) {
            check(updatesThreshold >= 1e-30 && updatesThreshold <= 1e30, "updatesThreshold", updatesThreshold,
                    "in [1e-30, 1e30]");
            return thresholdAlgorithm(new AdaptiveThresholdAlgorithm(updatesThreshold));
        }

        /**
         * What happens to each worker's residual after encoding. Default:
         * {@code new ResidualClippingPostProcessor(5.0, 5)} (clip to ±5 × threshold every 5
         * iterations); null means {@link NoOpResidualPostProcessor}.
         */
        public Builder residualPostProcessor(ResidualPostProcessor residualPostProcessor) {
            this.residualPostProcessor = residualPostProcessor == null ? new NoOpResidualPostProcessor()
                    : residualPostProcessor;
            return this;
        }

        /**
         * How the data is partitioned among worker tasks before training. Default
         * {@link DefaultRepartitioner} (balanced, one partition per worker, up to 5000); null keeps
         * the data's partitioning.
         */
        public Builder repartitioner(Repartitioner repartitioner) {
            this.repartitioner = repartitioner;
            return this;
        }

        /**
         * Stored for compatibility (default {@link Repartition#Always}); the {@link #repartitioner}
         * decides.
         *
         * @deprecated use {@link #repartitioner(Repartitioner)}
         */
        @Deprecated
        public Builder repartitionData(Repartition repartition) {
            check(repartition != null, "repartitionData", null, "not null");
            this.repartition = repartition;
            return this;
        }

        /**
         * Stored for compatibility (default {@link RepartitionStrategy#Balanced}); the
         * {@link #repartitioner} decides.
         *
         * @deprecated use {@link #repartitioner(Repartitioner)}
         */
        @Deprecated
        public Builder repartitionStrategy(RepartitionStrategy repartitionStrategy) {
            check(repartitionStrategy != null, "repartitionStrategy", null, "not null");
            this.repartitionStrategy = repartitionStrategy;
            return this;
        }

        /**
         * Storage level of the training RDD with {@link RDDTrainingApproach#Direct}. Default
         * {@code MEMORY_ONLY_SER}; null: no persistence. An RDD that is already persisted is used
         * as it is, at its own level, and left persisted after the fit. Only Spark's named levels
         * ({@code StorageLevel.MEMORY_AND_DISK()} etc.) are accepted, so that the master can be
         * written as JSON.
         */
        public Builder storageLevel(StorageLevel storageLevel) {
            try {
                StorageLevels.name(storageLevel);
            } catch (IllegalArgumentException e) {
                check(false, "storageLevel", storageLevel.description(), "one of Spark's named levels or null");
            }
            this.storageLevel = storageLevel;
            return this;
        }

        /**
         * How an {@code RDD<DataSet>} is consumed. Default {@link RDDTrainingApproach#Export}: the
         * DataSets are written to {@link #exportDirectory} first and the workers train from the files.
         */
        public Builder rddTrainingApproach(RDDTrainingApproach rddTrainingApproach) {
            check(rddTrainingApproach != null, "rddTrainingApproach", null, "not null");
            this.rddTrainingApproach = rddTrainingApproach;
            return this;
        }

        /**
         * Base directory for {@link RDDTrainingApproach#Export}; a fit writes to
         * {@code <exportDirectory>/<unique id>/} and deletes it afterwards. It must be visible to the
         * driver and every executor (HDFS, S3, or a shared file system). Default null:
         * {@code ${hadoop.tmp.dir}/ferrodl/}.
         */
        public Builder exportDirectory(String exportDirectory) {
            check(exportDirectory == null || !exportDirectory.isBlank(), "exportDirectory", quoted(exportDirectory),
                    "a non-blank path or null");
            this.exportDirectory = exportDirectory;
            return this;
        }

        /**
         * Kept for the reference's API, where it seeds random splitting and repartitioning. Here
         * both are deterministic (the same RDD gives the same partitions, every worker trains its
         * partition in order), so the seed changes nothing; it is kept in the master's JSON.
         */
        public Builder rngSeed(long rngSeed) {
            this.rngSeed = rngSeed;
            return this;
        }

        /** Collect per-worker statistics and relay counters, see {@link #getTrainingStats()}. Default false. */
        public Builder collectTrainingStats(boolean enable) {
            this.collectTrainingStats = enable;
            return this;
        }

        /**
         * Log the threshold, the fraction of entries sent and residual statistics per worker and step
         * (at info level). Costs time; default false.
         */
        public Builder encodingDebugMode(boolean enabled) {
            this.encodingDebugMode = enabled;
            return this;
        }

        /** Sleep this many milliseconds after every iteration, for debugging only. Default 0. */
        public Builder debugLongerIterations(long timeMs) {
            check(timeMs >= 0, "debugLongerIterations", timeMs, ">= 0");
            this.debugLongerIterations = timeMs;
            return this;
        }

        /**
         * Accepted and stored for compatibility; has no effect: ferrodl keeps no off-heap memory that
         * a periodic JVM garbage collection would need to free. Default true.
         */
        public Builder workerTogglePeriodicGC(boolean workerTogglePeriodicGC) {
            this.workerTogglePeriodicGC = workerTogglePeriodicGC;
            return this;
        }

        /**
         * Accepted and stored for compatibility; has no effect (see
         * {@link #workerTogglePeriodicGC(boolean)}). Default 5000.
         */
        public Builder workerPeriodicGCFrequency(int workerPeriodicGCFrequency) {
            check(workerPeriodicGCFrequency > 0, "workerPeriodicGCFrequency", workerPeriodicGCFrequency, ">= 1");
            this.workerPeriodicGCFrequency = workerPeriodicGCFrequency;
            return this;
        }

        /**
         * The relay listens on the first free port in {@code [from, to]} (inclusive), e.g. to match
         * a firewall rule. Default: any free port.
         */
        public Builder relayPortRange(int from, int to) {
            check(from >= 1 && to <= 65535 && from <= to, "relayPortRange", from + ".." + to,
                    "1 <= from <= to <= 65535");
            this.relayPortRange = new int[] {from, to};
            return this;
        }

        /**
         * Address the relay binds to and that workers connect to. Default null: the relay binds all
         * interfaces and workers connect to Spark's driver host ({@code spark.driver.host}).
         */
        public Builder relayBindAddress(String address) {
            check(address == null || (!address.isBlank() && address.strip().equals(address)), "relayBindAddress",
                    quoted(address), "a host name or IP address without spaces, or null");
            this.relayBindAddress = address;
            return this;
        }

        /** Messages queued per relay connection before the sender waits (back-pressure). Default 64. */
        public Builder relayQueueLimit(int messages) {
            check(messages >= 1, "relayQueueLimit", messages, ">= 1");
            this.relayQueueLimit = messages;
            return this;
        }

        /**
         * Limit on each connect, read and write of a relay connection; a worker or relay that waits
         * longer fails with an error naming the host and port. Default 60 000 ms.
         */
        public Builder relayTimeoutMs(long timeoutMs) {
            check(timeoutMs >= 100, "relayTimeoutMs", timeoutMs, ">= 100 ms");
            this.relayTimeoutMs = timeoutMs;
            return this;
        }

        /**
         * Lets a fit run on a cluster whose Spark authentication is off. Default false: with
         * {@code spark.authenticate=false} and a master other than {@code local[...]}, a fit is
         * refused, because Spark's block manager then serves the tasks' broadcast binary that
         * carries the relay's per-fit secret to anyone who can reach it, and with the secret a stranger can
         * join the relay, read the parameters and poison the model. Set it only where every
         * process that can reach the driver and executors is trusted (an isolated network); the
         * fit then logs a warning. The Spark property
         * {@code spark.ferrodl.relay.allowWithoutSparkAuthentication=true} allows it as well (for
         * spark-submit without changing the program). See the README's security section.
         */
        public Builder relayAllowWithoutSparkAuthentication(boolean allow) {
            this.relayAllowWithoutSparkAuthentication = allow;
            return this;
        }

        /**
         * A worker task that makes no progress (no minibatch fetched or trained) for this long
         * while connected to the relay fails the fit, with a message naming its executor, host,
         * partition and the last thing it did (a data source that blocks, a hung task). The fit
         * fails rather than Spark re-running the task: a re-run would most likely block on the
         * same data again. Default 300 000 ms (5 minutes); it must be longer than the slowest
         * minibatch step.
         */
        public Builder workerStallTimeoutMs(long timeoutMs) {
            check(timeoutMs >= 100, "workerStallTimeoutMs", timeoutMs, ">= 100 ms");
            this.workerStallTimeoutMs = timeoutMs;
            return this;
        }

        public SharedTrainingMaster build() {
            return new SharedTrainingMaster(this);
        }
    }
}
