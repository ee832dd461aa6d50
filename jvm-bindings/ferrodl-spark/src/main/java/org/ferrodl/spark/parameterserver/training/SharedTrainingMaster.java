package org.ferrodl.spark.parameterserver.training;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.Arrays;
import java.util.Objects;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.optimize.solvers.accumulation.encoding.ResidualPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.ResidualClippingPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.FixedThresholdAlgorithm;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.api.Repartitioner;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.common.StorageLevels;
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
 * <p>Configuration objects are immutable and serializable (they are shipped to executors); they
 * round-trip through {@link #toJson()} / {@link #fromJson(String)} and YAML.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY, getterVisibility = JsonAutoDetect.Visibility.NONE,
        isGetterVisibility = JsonAutoDetect.Visibility.NONE, setterVisibility = JsonAutoDetect.Visibility.NONE)
@JsonInclude(JsonInclude.Include.ALWAYS)
public class SharedTrainingMaster implements TrainingMaster {
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

    @JsonIgnore
    private transient SparkTrainingStats lastStats;

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
    }

    @Override
    public void executeTraining(SparkDl4jMultiLayer network, JavaRDD<DataSet> trainingData) {
        lastStats = SharedTrainingDriver.run(this, network, trainingData);
    }

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

    private static ObjectMapper json() {
        return new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
    }

    private static ObjectMapper yaml() {
        return new ObjectMapper(new YAMLFactory()).configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
    }

    @Override
    public String toJson() {
        try {
            return json().writerWithDefaultPrettyPrinter().writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write SharedTrainingMaster as JSON", e);
        }
    }

    @Override
    public String toYaml() {
        try {
            return yaml().writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write SharedTrainingMaster as YAML", e);
        }
    }

    /** Reads a master written by {@link #toJson()}; unknown or invalid fields are refused. */
    public static SharedTrainingMaster fromJson(String jsonStr) {
        try {
            return json().readValue(jsonStr, SharedTrainingMaster.class).validated();
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid SharedTrainingMaster JSON: " + e.getOriginalMessage());
        }
    }

    /** Reads a master written by {@link #toYaml()}; unknown or invalid fields are refused. */
    public static SharedTrainingMaster fromYaml(String yamlStr) {
        try {
            return yaml().readValue(yamlStr, SharedTrainingMaster.class).validated();
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid SharedTrainingMaster YAML: " + e.getOriginalMessage());
        }
    }

    private SharedTrainingMaster validated() {
        Builder b = new Builder(Math.max(1, rddDataSetNumExamples));
        Builder.check(rddDataSetNumExamples > 0, "rddDataSetNumExamples", rddDataSetNumExamples);
        b.batchSizePerWorker(batchSizePerWorker).workersPerNode(workersPerNode)
                .workerPrefetchNumBatches(workerPrefetchNumBatches).debugLongerIterations(debugLongerIterations)
                .workerPeriodicGCFrequency(workerPeriodicGCFrequency).relayQueueLimit(relayQueueLimit)
                .relayTimeoutMs(relayTimeoutMs);
        Builder.check(thresholdAlgorithm != null, "thresholdAlgorithm", null);
        Builder.check(residualPostProcessor != null, "residualPostProcessor", null);
        Builder.check(rddTrainingApproach != null, "rddTrainingApproach", null);
        if (relayPortRange != null) {
            Builder.check(relayPortRange.length == 2, "relayPortRange", Arrays.toString(relayPortRange));
            b.relayPortRange(relayPortRange[0], relayPortRange[1]);
        }
        StorageLevels.fromName(storageLevel);
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
                && relayQueueLimit == m.relayQueueLimit && relayTimeoutMs == m.relayTimeoutMs;
    }

    @Override
    public int hashCode() {
        return Objects.hash(rddDataSetNumExamples, batchSizePerWorker, workersPerNode, workerPrefetchNumBatches,
                thresholdAlgorithm, residualPostProcessor, repartitioner, repartition, repartitionStrategy,
                storageLevel, rddTrainingApproach, exportDirectory, rngSeed, collectTrainingStats, encodingDebugMode,
                debugLongerIterations, workerTogglePeriodicGC, workerPeriodicGCFrequency,
                Arrays.hashCode(relayPortRange), relayBindAddress, relayQueueLimit, relayTimeoutMs);
    }

    @Override
    public String toString() {
        return "SharedTrainingMaster" + toJson();
    }

    /** Builder with the reference's options and defaults, plus the relay's (ours). */
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

        /** @param rddDataSetNumExamples examples in each DataSet object of the training RDD */
        public Builder(int rddDataSetNumExamples) {
            check(rddDataSetNumExamples > 0, "rddDataSetNumExamples", rddDataSetNumExamples);
            this.rddDataSetNumExamples = rddDataSetNumExamples;
        }

        /** @param thresholdAlgorithm the encoding threshold algorithm (see {@link #thresholdAlgorithm}) */
        public Builder(ThresholdAlgorithm thresholdAlgorithm, int rddDataSetNumExamples) {
            this(rddDataSetNumExamples);
            thresholdAlgorithm(thresholdAlgorithm);
        }

        /** @deprecated use {@link #Builder(ThresholdAlgorithm, int)}: a fixed threshold, as the reference maps it */
        @Deprecated
        public Builder(double threshold, int rddDataSetNumExamples) {
            this(new FixedThresholdAlgorithm(threshold), rddDataSetNumExamples);
        }

        static void check(boolean ok, String option, Object value) {
            if (!ok) {
                throw new IllegalArgumentException("SharedTrainingMaster option " + option + ": invalid value " + value);
            }
        }

        /** Minibatch size each worker trains on (DataSets are split or merged to it). Default 16. */
        public Builder batchSizePerWorker(int batchSize) {
            check(batchSize > 0, "batchSizePerWorker", batchSize);
            this.batchSizePerWorker = batchSize;
            return this;
        }

        /** Network replicas trained in parallel per worker task; -1 (default): automatic, 1 on CPU. */
        public Builder workersPerNode(int numWorkers) {
            check(numWorkers == -1 || numWorkers >= 1, "workersPerNode", numWorkers);
            this.workersPerNode = numWorkers;
            return this;
        }

        /** Minibatches prefetched asynchronously per worker. Default 2; 0 disables prefetching. */
        public Builder workerPrefetchNumBatches(int prefetchNumBatches) {
            check(prefetchNumBatches >= 0, "workerPrefetchNumBatches", prefetchNumBatches);
            this.workerPrefetchNumBatches = prefetchNumBatches;
            return this;
        }

        /** Default: {@code new AdaptiveThresholdAlgorithm()}. */
        public Builder thresholdAlgorithm(ThresholdAlgorithm thresholdAlgorithm) {
            check(thresholdAlgorithm != null, "thresholdAlgorithm", null);
            this.thresholdAlgorithm = thresholdAlgorithm;
            return this;
        }

        /** @deprecated use {@link #thresholdAlgorithm}: sets a {@link FixedThresholdAlgorithm}. */
        @Deprecated
        public Builder updatesThreshold(double updatesThreshold) {
            return thresholdAlgorithm(new FixedThresholdAlgorithm(updatesThreshold));
        }

        /** Default: {@code new ResidualClippingPostProcessor(5.0, 5)}; null means no post-processing. */
        public Builder residualPostProcessor(ResidualPostProcessor residualPostProcessor) {
            this.residualPostProcessor = residualPostProcessor == null
                    ? new org.ferrodl.optimize.solvers.accumulation.encoding.residual.NoOpResidualPostProcessor()
                    : residualPostProcessor;
            return this;
        }

        /** Default: {@link DefaultRepartitioner}; null keeps the data's partitioning. */
        public Builder repartitioner(Repartitioner repartitioner) {
            this.repartitioner = repartitioner;
            return this;
        }

        /** @deprecated use {@link #repartitioner(Repartitioner)}; stored for compatibility. */
        @Deprecated
        public Builder repartitionData(Repartition repartition) {
            check(repartition != null, "repartitionData", null);
            this.repartition = repartition;
            return this;
        }

        /** @deprecated use {@link #repartitioner(Repartitioner)}; stored for compatibility. */
        @Deprecated
        public Builder repartitionStrategy(RepartitionStrategy repartitionStrategy) {
            check(repartitionStrategy != null, "repartitionStrategy", null);
            this.repartitionStrategy = repartitionStrategy;
            return this;
        }

        /** Storage level of the training RDD with {@link RDDTrainingApproach#Direct}; null: no persistence. */
        public Builder storageLevel(StorageLevel storageLevel) {
            this.storageLevel = storageLevel;
            return this;
        }

        /** Default {@link RDDTrainingApproach#Export}. */
        public Builder rddTrainingApproach(RDDTrainingApproach rddTrainingApproach) {
            check(rddTrainingApproach != null, "rddTrainingApproach", null);
            this.rddTrainingApproach = rddTrainingApproach;
            return this;
        }

        /** Base directory for {@link RDDTrainingApproach#Export}; must be shared by driver and executors. */
        public Builder exportDirectory(String exportDirectory) {
            check(exportDirectory == null || !exportDirectory.isBlank(), "exportDirectory", "\"" + exportDirectory + "\"");
            this.exportDirectory = exportDirectory;
            return this;
        }

        public Builder rngSeed(long rngSeed) {
            this.rngSeed = rngSeed;
            return this;
        }

        public Builder collectTrainingStats(boolean enable) {
            this.collectTrainingStats = enable;
            return this;
        }

        /** Logs threshold, sparsity and residual statistics per worker and step (costs time). */
        public Builder encodingDebugMode(boolean enabled) {
            this.encodingDebugMode = enabled;
            return this;
        }

        /** Sleeps this many milliseconds after every iteration. Debugging only. */
        public Builder debugLongerIterations(long timeMs) {
            check(timeMs >= 0, "debugLongerIterations", timeMs);
            this.debugLongerIterations = timeMs;
            return this;
        }

        /** Accepted for compatibility; ferrodl has no off-heap memory for a periodic GC to free. */
        public Builder workerTogglePeriodicGC(boolean workerTogglePeriodicGC) {
            this.workerTogglePeriodicGC = workerTogglePeriodicGC;
            return this;
        }

        /** Accepted for compatibility; see {@link #workerTogglePeriodicGC(boolean)}. */
        public Builder workerPeriodicGCFrequency(int workerPeriodicGCFrequency) {
            check(workerPeriodicGCFrequency > 0, "workerPeriodicGCFrequency", workerPeriodicGCFrequency);
            this.workerPeriodicGCFrequency = workerPeriodicGCFrequency;
            return this;
        }

        /** The relay listens on the first free port in {@code [from, to]}; default any free port. */
        public Builder relayPortRange(int from, int to) {
            check(from >= 1 && to <= 65535 && from <= to, "relayPortRange", from + ".." + to);
            this.relayPortRange = new int[] {from, to};
            return this;
        }

        /** Address the relay binds to and workers connect to; default all interfaces, advertised as spark.driver.host. */
        public Builder relayBindAddress(String address) {
            check(address == null || !address.isBlank(), "relayBindAddress", "\"" + address + "\"");
            this.relayBindAddress = address;
            return this;
        }

        /** Messages queued per connection before senders wait (back-pressure). Default 64. */
        public Builder relayQueueLimit(int messages) {
            check(messages >= 1, "relayQueueLimit", messages);
            this.relayQueueLimit = messages;
            return this;
        }

        /** Connect, read and write timeout of relay connections. Default 60 000 ms. */
        public Builder relayTimeoutMs(long timeoutMs) {
            check(timeoutMs >= 100, "relayTimeoutMs", timeoutMs);
            this.relayTimeoutMs = timeoutMs;
            return this;
        }

        public SharedTrainingMaster build() {
            return new SharedTrainingMaster(this);
        }
    }
}
