package org.ferrodl.spark.impl.paramavg;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Objects;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.common.BalancedSplitter;
import org.ferrodl.spark.impl.common.MasterSerde;
import org.ferrodl.spark.impl.common.JobDescriptions;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.StorageLevels;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import scala.Tuple2;

/**
 * Synchronous data-parallel training by parameter averaging.
 *
 * <p>The DataSet objects of a fit are dealt into splits of
 * {@code numWorkers × batchSizePerWorker × averagingFrequency} examples (counted with
 * {@code rddDataSetNumExamples} examples per object). In each split every worker starts from the
 * driver's parameters (and updater state when {@code saveUpdater}), fits up to
 * {@code averagingFrequency} minibatches of exactly {@code batchSizePerWorker} examples, and the
 * workers' parameters (and updater states) are summed with {@code treeAggregate(depth =
 * aggregationDepth)} and divided by the number of workers that trained. The iteration counter grows
 * by the minibatches each worker fitted, the epoch counter by one per fit call, and the network's
 * score is the mean of the workers' last minibatch scores of the last split.
 *
 * <p>Instances are immutable configuration plus the statistics of the last fit; they round-trip
 * through {@link #toJson()} / {@link #fromJson(String)} and YAML.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY, getterVisibility = JsonAutoDetect.Visibility.NONE,
        isGetterVisibility = JsonAutoDetect.Visibility.NONE, setterVisibility = JsonAutoDetect.Visibility.NONE)
@JsonInclude(JsonInclude.Include.ALWAYS)
public class ParameterAveragingTrainingMaster implements TrainingMaster {
    private static final long serialVersionUID = 1L;

    private Integer numWorkers;
    private int rddDataSetNumExamples;
    private int batchSizePerWorker = 16;
    private int averagingFrequency = 5;
    private int aggregationDepth = 2;
    private boolean saveUpdater = true;
    private int prefetchNumBatches = 0;
    private Repartition repartition = Repartition.Always;
    private RepartitionStrategy repartitionStrategy = RepartitionStrategy.Balanced;
    private String storageLevel = "MEMORY_ONLY_SER";
    private Long rngSeed;
    private boolean collectTrainingStats;

    @JsonIgnore
    private transient SparkTrainingStats lastStats;

    private ParameterAveragingTrainingMaster() {
        // for Jackson
    }

    private ParameterAveragingTrainingMaster(Builder b) {
        this.numWorkers = b.numWorkers;
        this.rddDataSetNumExamples = b.rddDataSetNumExamples;
        this.batchSizePerWorker = b.batchSizePerWorker;
        this.averagingFrequency = b.averagingFrequency;
        this.aggregationDepth = b.aggregationDepth;
        this.saveUpdater = b.saveUpdater;
        this.prefetchNumBatches = b.prefetchNumBatches;
        this.repartition = b.repartition;
        this.repartitionStrategy = b.repartitionStrategy;
        this.storageLevel = StorageLevels.name(b.storageLevel);
        this.rngSeed = b.rngSeed;
        this.collectTrainingStats = b.collectTrainingStats;
    }

    // ---------------------------------------------------------------------------------- training

    @Override
    public void executeTraining(SparkDl4jMultiLayer sparkNetwork, JavaRDD<DataSet> trainingData) {
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        MultiLayerNetwork network = sparkNetwork.getNetwork();
        int workers = numWorkers != null ? numWorkers : sc.defaultParallelism();
        if (workers <= 0) {
            throw new DL4JInvalidConfigException("numWorkers must be positive, got " + workers);
        }

        JobDescriptions.part(sc, "counting DataSet objects");
        JavaPairRDD<DataSet, Long> indexed = trainingData.zipWithIndex();
        long numObjects = indexed.count();
        if (numObjects == 0) {
            throw new DL4JInvalidInputException("cannot fit: the training RDD is empty (0 DataSet objects)");
        }
        if (numObjects > Integer.MAX_VALUE) {
            throw new DL4JInvalidInputException("cannot fit: " + numObjects + " DataSet objects exceed "
                    + Integer.MAX_VALUE + "; use larger DataSet objects");
        }
        int objectsPerWorker = Math.max(1, batchSizePerWorker * averagingFrequency / rddDataSetNumExamples);
        BalancedSplitter splitter = new BalancedSplitter(numObjects, workers, objectsPerWorker);

        long seed = rngSeed != null ? rngSeed : System.nanoTime();
        Broadcast<int[]> positions = repartition == Repartition.Always
                ? sc.broadcast(BalancedSplitter.shuffledPositions((int) numObjects, seed + network.getEpochCount()))
                : null;
        JavaPairRDD<Long, DataSet> positioned = indexed.mapToPair(t -> new Tuple2<>(
                positions == null ? t._2() : (long) positions.value()[t._2().intValue()], t._1()));
        StorageLevel level = StorageLevels.fromName(storageLevel);
        if (level != null && !level.equals(StorageLevel.NONE())) {
            positioned = positioned.persist(level);
        }

        SparkTrainingStats stats = collectTrainingStats ? new SparkTrainingStats() : null;
        Partitioner byWorker = new WorkerPartitioner(splitter, workers);
        double score = Double.NaN;
        try {
            for (int split = 0; split < splitter.numSplits(); split++) {
                long t0 = System.currentTimeMillis();
                final int s = split;
                JobDescriptions.part(sc, "split " + (split + 1) + "/" + splitter.numSplits());
                Broadcast<NetworkSnapshot> snapshot = sc.broadcast(NetworkSnapshot.of(network, saveUpdater));
                JavaRDD<AveragingAggregate> results = positioned
                        .filter(p -> splitter.splitOf(p._1()) == s)
                        .partitionBy(byWorker)
                        .mapPartitionsWithIndex(new ParameterAveragingWorker(snapshot, batchSizePerWorker,
                                averagingFrequency, prefetchNumBatches, s, saveUpdater, collectTrainingStats), true);
                AveragingAggregate sum = results.treeAggregate(AveragingAggregate.empty(),
                        AveragingAggregate::add, AveragingAggregate::add, aggregationDepth);
                snapshot.destroy();
                if (sum.workers > 0) {
                    network.setParams(Nd4j.create(AveragingAggregate.mean(sum.paramSum, sum.workers),
                            1, sum.paramSum.length));
                    if (saveUpdater && sum.updaterSum != null) {
                        network.setUpdaterState(Nd4j.create(AveragingAggregate.mean(sum.updaterSum, sum.workers),
                                1, sum.updaterSum.length));
                    }
                    network.setIterationCount(network.getIterationCount() + sum.maxMinibatches);
                    score = sum.scoreSum / sum.workers;
                }
                if (stats != null) {
                    sum.stats.forEach(stats::addWorker);
                    stats.addSplitMillis(System.currentTimeMillis() - t0);
                }
            }
        } finally {
            positioned.unpersist(false);
            if (positions != null) {
                positions.destroy();
            }
        }
        network.setEpochCount(network.getEpochCount() + 1);
        sparkNetwork.setScore(score);
        lastStats = stats;
    }

    /** Sends each position to the worker that owns it in its split. */
    static final class WorkerPartitioner extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final BalancedSplitter splitter;
        private final int workers;

        WorkerPartitioner(BalancedSplitter splitter, int workers) {
            this.splitter = splitter;
            this.workers = workers;
        }

        @Override
        public int numPartitions() {
            return workers;
        }

        @Override
        public int getPartition(Object key) {
            return splitter.workerOf((Long) key);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof WorkerPartitioner w && w.workers == workers && w.splitter == splitter;
        }

        @Override
        public int hashCode() {
            return Objects.hash(workers, System.identityHashCode(splitter));
        }
    }

    // ------------------------------------------------------------------------- configuration API

    public Integer getNumWorkers() {
        return numWorkers;
    }

    public int getRddDataSetNumExamples() {
        return rddDataSetNumExamples;
    }

    public int getBatchSizePerWorker() {
        return batchSizePerWorker;
    }

    public int getAveragingFrequency() {
        return averagingFrequency;
    }

    public int getAggregationDepth() {
        return aggregationDepth;
    }

    public boolean isSaveUpdater() {
        return saveUpdater;
    }

    public int getPrefetchNumBatches() {
        return prefetchNumBatches;
    }

    public Repartition getRepartition() {
        return repartition;
    }

    public RepartitionStrategy getRepartitionStrategy() {
        return repartitionStrategy;
    }

    public StorageLevel getStorageLevel() {
        return StorageLevels.fromName(storageLevel);
    }

    public Long getRngSeed() {
        return rngSeed;
    }

    @Override
    public void setCollectTrainingStats(boolean collectTrainingStats) {
        this.collectTrainingStats = collectTrainingStats;
    }

    @Override
    public boolean getIsCollectTrainingStats() {
        return collectTrainingStats;
    }

    @Override
    public SparkTrainingStats getTrainingStats() {
        return lastStats;
    }

    @Override
    public String toJson() {
        return MasterSerde.toJson(this);
    }

    @Override
    public String toYaml() {
        return MasterSerde.toYaml(this);
    }

    /** Reads a master written by {@link #toJson()}; unknown or invalid fields are refused. */
    public static ParameterAveragingTrainingMaster fromJson(String jsonStr) {
        return MasterSerde.fromJson(jsonStr, ParameterAveragingTrainingMaster.class).validated();
    }

    /** Reads a master written by {@link #toYaml()}; unknown or invalid fields are refused. */
    public static ParameterAveragingTrainingMaster fromYaml(String yamlStr) {
        return MasterSerde.fromYaml(yamlStr, ParameterAveragingTrainingMaster.class).validated();
    }

    private ParameterAveragingTrainingMaster validated() {
        Builder.check(numWorkers == null || numWorkers > 0, "numWorkers", numWorkers);
        Builder.check(rddDataSetNumExamples > 0, "rddDataSetNumExamples", rddDataSetNumExamples);
        Builder.check(batchSizePerWorker > 0, "batchSizePerWorker", batchSizePerWorker);
        Builder.check(averagingFrequency > 0, "averagingFrequency", averagingFrequency);
        Builder.check(aggregationDepth > 0, "aggregationDepth", aggregationDepth);
        Builder.check(prefetchNumBatches >= 0, "workerPrefetchNumBatches", prefetchNumBatches);
        StorageLevels.fromName(storageLevel);
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ParameterAveragingTrainingMaster m)) {
            return false;
        }
        return Objects.equals(numWorkers, m.numWorkers) && rddDataSetNumExamples == m.rddDataSetNumExamples
                && batchSizePerWorker == m.batchSizePerWorker && averagingFrequency == m.averagingFrequency
                && aggregationDepth == m.aggregationDepth && saveUpdater == m.saveUpdater
                && prefetchNumBatches == m.prefetchNumBatches && repartition == m.repartition
                && repartitionStrategy == m.repartitionStrategy && Objects.equals(storageLevel, m.storageLevel)
                && Objects.equals(rngSeed, m.rngSeed) && collectTrainingStats == m.collectTrainingStats;
    }

    @Override
    public int hashCode() {
        return Objects.hash(numWorkers, rddDataSetNumExamples, batchSizePerWorker, averagingFrequency,
                aggregationDepth, saveUpdater, prefetchNumBatches, repartition, repartitionStrategy, storageLevel,
                rngSeed, collectTrainingStats);
    }

    @Override
    public String toString() {
        return "ParameterAveragingTrainingMaster" + toJson();
    }

    /** Builder with the reference's options and defaults. */
    public static class Builder {
        private Integer numWorkers;
        private final int rddDataSetNumExamples;
        private int batchSizePerWorker = 16;
        private int averagingFrequency = 5;
        private int aggregationDepth = 2;
        private boolean saveUpdater = true;
        private int prefetchNumBatches = 0;
        private Repartition repartition = Repartition.Always;
        private RepartitionStrategy repartitionStrategy = RepartitionStrategy.Balanced;
        private StorageLevel storageLevel = StorageLevel.MEMORY_ONLY_SER();
        private Long rngSeed;
        private boolean collectTrainingStats;

        /**
         * Number of workers = Spark's default parallelism at fit time.
         *
         * @param rddDataSetNumExamples number of examples in each DataSet object of the RDD
         */
        public Builder(int rddDataSetNumExamples) {
            this(null, rddDataSetNumExamples);
        }

        /**
         * @param numWorkers            number of workers (executors × threads per executor); null: Spark's
         *                              default parallelism
         * @param rddDataSetNumExamples number of examples in each DataSet object of the RDD
         */
        public Builder(Integer numWorkers, int rddDataSetNumExamples) {
            check(numWorkers == null || numWorkers > 0, "numWorkers", numWorkers);
            check(rddDataSetNumExamples > 0, "rddDataSetNumExamples", rddDataSetNumExamples);
            this.numWorkers = numWorkers;
            this.rddDataSetNumExamples = rddDataSetNumExamples;
        }

        static void check(boolean ok, String option, Object value) {
            if (!ok) {
                throw new DL4JInvalidConfigException("ParameterAveragingTrainingMaster option " + option
                        + " has invalid value " + value + " (must be positive"
                        + (option.equals("workerPrefetchNumBatches") ? " or 0" : "") + ")");
            }
        }

        /** Examples per minibatch on each worker (default 16). */
        public Builder batchSizePerWorker(int batchSizePerWorker) {
            check(batchSizePerWorker > 0, "batchSizePerWorker", batchSizePerWorker);
            this.batchSizePerWorker = batchSizePerWorker;
            return this;
        }

        /** Minibatches each worker fits between averagings (default 5). */
        public Builder averagingFrequency(int averagingFrequency) {
            check(averagingFrequency > 0, "averagingFrequency", averagingFrequency);
            this.averagingFrequency = averagingFrequency;
            return this;
        }

        /** Depth of the {@code treeAggregate} that sums worker results (default 2). */
        public Builder aggregationDepth(int aggregationDepth) {
            check(aggregationDepth > 0, "aggregationDepth", aggregationDepth);
            this.aggregationDepth = aggregationDepth;
            return this;
        }

        /** Whether updater state (momentum, Adam moments) is averaged and carried (default true). */
        public Builder saveUpdater(boolean saveUpdater) {
            this.saveUpdater = saveUpdater;
            return this;
        }

        /** Minibatches to prepare ahead on a background thread in each worker (default 0: off). */
        public Builder workerPrefetchNumBatches(int prefetchNumBatches) {
            check(prefetchNumBatches >= 0, "workerPrefetchNumBatches", prefetchNumBatches);
            this.prefetchNumBatches = prefetchNumBatches;
            return this;
        }

        /** When to redistribute data among workers (default {@link Repartition#Always}). */
        public Builder repartionData(Repartition repartition) {
            this.repartition = Objects.requireNonNull(repartition, "repartition");
            return this;
        }

        /** How to redistribute data (default and only strategy: {@link RepartitionStrategy#Balanced}). */
        public Builder repartitionStrategy(RepartitionStrategy repartitionStrategy) {
            this.repartitionStrategy = Objects.requireNonNull(repartitionStrategy, "repartitionStrategy");
            return this;
        }

        /** Storage level of the positioned training RDD (default MEMORY_ONLY_SER; null: no persistence). */
        public Builder storageLevel(StorageLevel storageLevel) {
            StorageLevels.name(storageLevel); // refuses levels without a constant name, early
            this.storageLevel = storageLevel;
            return this;
        }

        /** Seed of the shuffle that deals data to workers (default: a random seed per fit). */
        public Builder rngSeed(long rngSeed) {
            this.rngSeed = rngSeed;
            return this;
        }

        /** Collect per-worker statistics (default false). */
        public Builder collectTrainingStats(boolean collectTrainingStats) {
            this.collectTrainingStats = collectTrainingStats;
            return this;
        }

        public ParameterAveragingTrainingMaster build() {
            return new ParameterAveragingTrainingMaster(this);
        }
    }
}
