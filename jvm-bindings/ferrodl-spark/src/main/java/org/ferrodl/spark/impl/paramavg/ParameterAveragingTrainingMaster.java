package org.ferrodl.spark.impl.paramavg;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.io.Serializable;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.PartitionPruningRDD;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.core.loader.MultiDataSetLoader;
import org.ferrodl.core.loader.impl.SerializedDataSetLoader;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.optimize.api.TrainingListener;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.common.BalancedSplitter;
import org.ferrodl.spark.impl.common.DataSetExport;
import org.ferrodl.spark.impl.common.HadoopConf;
import org.ferrodl.spark.impl.common.JobDescriptions;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * Synchronous data-parallel training by parameter averaging, of a {@code SparkDl4jMultiLayer}
 * (on DataSets) or a {@code SparkComputationGraph} (on MultiDataSets; DataSets for a graph with one
 * input and one output) through the same worker. Below, "DataSet" stands for either.
 *
 * <h2>Data flow of one fit</h2>
 * <ol>
 *   <li>With {@link RDDTrainingApproach#Export} (default) the DataSets are first written to
 *       {@code <exportDirectory>/<unique id>/} (default base {@code ${hadoop.tmp.dir}/ferrodl}) and
 *       training deals the file paths (persisted with {@code storageLevelStreams}); workers read
 *       their files. Fitting the same RDD again (the next epoch) reuses the export; it is deleted
 *       when another RDD is exported, by {@link #deleteTempFiles} and when the JVM exits. With {@link RDDTrainingApproach#Direct}
 *       the DataSets themselves are dealt (persisted with {@code storageLevel}). {@code fit(String)}
 *       and {@code fitPaths} deal the given paths the same way.</li>
 *   <li>Every object gets a position: its index in RDD order, or, when {@code rngSeed} is set, its
 *       index in a shuffle seeded with {@code rngSeed + epoch} (so epochs see different orders, and
 *       any fit with a seed is repeatable). Without a seed nothing is random: a fit is repeatable
 *       and one worker trains exactly as local training on the RDD in order. When the RDD is
 *       persisted (by the user) with one partition per worker (and the strategy is Balanced), split
 *       {@code s} instead takes the
 *       {@code s}-th run of objects of every partition (each partition in order, or shuffled with
 *       {@code rngSeed + epoch + partition}), so worker {@code w}'s share is partition {@code w}'s own
 *       objects when the partitions are equal: as in the reference, correctly sized partitions stay
 *       where they are, and a cached RDD is trained without moving its blocks.</li>
 *   <li>Positions are cut into splits of {@code numWorkers × batchSizePerWorker × averagingFrequency}
 *       examples (counted with {@code rddDataSetNumExamples} per object); within a split objects go
 *       to workers as {@link Repartition} and {@link RepartitionStrategy} say.</li>
 *   <li>In each split every worker starts from the driver's parameters (and updater state when
 *       {@code saveUpdater}), fits its objects in position order in minibatches of exactly
 *       {@code batchSizePerWorker} examples ({@code averagingFrequency} of them with balanced
 *       shares), running the training
 *       hooks and listeners around each; the results are summed with
 *       {@code treeAggregate(depth = aggregationDepth)} and divided by the number of workers that
 *       trained.</li>
 * </ol>
 * The iteration counter grows by the minibatches each worker fitted, the epoch counter by one per
 * fit, and the network's score is the mean of the workers' last minibatch scores of the last split.
 *
 * <p><b>Difference from the reference:</b> without {@code rngSeed} the reference splits randomly
 * (a different random seed each fit); ferrodl keeps RDD order unless a seed asks for a shuffle, so
 * default fits are repeatable.
 *
 * <p><b>Speed:</b> every worker returns its parameters (and updater state) after each split; above
 * Spark's {@code spark.task.maxDirectResultSize} (1 MiB by default, about 130,000 parameters with
 * Adam) that result goes through the block manager in a second step. Setting it higher (below
 * {@code spark.rpc.message.maxSize}), e.g. {@code --conf spark.task.maxDirectResultSize=128m},
 * made splits of the MNIST MLP markedly faster (docs/BENCHMARKS.md, the Spark path);
 * {@code collectTrainingStats(true)} fills {@link SparkTrainingStats#getTimeBreakdown()}, which says
 * where a fit's time went.
 *
 * <p>Instances are configuration plus the statistics of the last fit; they round-trip through
 * {@link #toJson()} / {@link #fromJson(String)} and YAML.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY, getterVisibility = JsonAutoDetect.Visibility.NONE,
        isGetterVisibility = JsonAutoDetect.Visibility.NONE, setterVisibility = JsonAutoDetect.Visibility.NONE)
@JsonInclude(JsonInclude.Include.ALWAYS)
public class ParameterAveragingTrainingMaster
        implements TrainingMaster<AveragingAggregate, ParameterAveragingWorker<?, ?, ?>> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ParameterAveragingTrainingMaster.class);

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
    private String storageLevelStreams = "MEMORY_ONLY";
    private RDDTrainingApproach rddTrainingApproach = RDDTrainingApproach.Export;
    private String exportDirectory;
    private Long rngSeed;
    private boolean collectTrainingStats;
    private List<TrainingHook> trainingHooks = new ArrayList<>();

    @JsonIgnore
    private transient SparkTrainingStats lastStats;
    @JsonIgnore
    private transient List<TrainingListener> listeners = List.of();
    @JsonIgnore
    private transient Export lastExport;
    @JsonIgnore
    private transient Thread cleanup;
    @JsonIgnore
    private transient Sizes lastSizes;

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
        this.storageLevelStreams = StorageLevels.name(b.storageLevelStreams);
        this.rddTrainingApproach = b.rddTrainingApproach;
        this.exportDirectory = b.exportDirectory;
        this.rngSeed = b.rngSeed;
        this.collectTrainingStats = b.collectTrainingStats;
        this.trainingHooks = new ArrayList<>(b.trainingHooks);
    }

    // ---------------------------------------------------------------------------------- training

    @Override
    public void executeTraining(SparkDl4jMultiLayer sparkNetwork, JavaRDD<DataSet> trainingData) {
        trainOn(sparkNetwork, trainingData);
    }

    @Override
    public void executeTraining(SparkComputationGraph graph, JavaRDD<DataSet> trainingData) {
        if (rddTrainingApproach == RDDTrainingApproach.Direct) {
            train(graph, trainingData.map(MultiDataSet::fromDataSet), null, StorageLevels.fromName(storageLevel));
            return;
        }
        // the DataSets themselves are exported, so that fitting the same RDD again reuses the export
        JavaSparkContext sc = graph.getSparkContext();
        ExportedPaths e = exported(sc, trainingData, NetworkKind.MULTI_LAYER);
        train(graph, e.paths(), LoadFunctions.graphLoading(new SerializedDataSetLoader(), null, HadoopConf.of(sc)),
                StorageLevels.fromName(storageLevelStreams), e.exportMillis());
    }

    @Override
    public void executeTrainingMDS(SparkComputationGraph graph, JavaRDD<MultiDataSet> trainingData) {
        trainOn(graph, trainingData);
    }

    /** Trains on an RDD of the network's minibatch type with the configured approach. */
    private <N extends NativeHandleOwner & Model, B> void trainOn(SparkNetwork<N, B> sparkNetwork, JavaRDD<B> data) {
        if (!data.getStorageLevel().equals(StorageLevel.NONE())) {
            // persisted by the user: trained from as it is, under either approach (RDDTrainingApproach)
            train(sparkNetwork, data, null, null);
            return;
        }
        if (rddTrainingApproach == RDDTrainingApproach.Direct) {
            train(sparkNetwork, data, null, StorageLevels.fromName(storageLevel));
            return;
        }
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();
        ExportedPaths e = exported(sc, data, kind);
        train(sparkNetwork, e.paths(), kind.storedLoader(HadoopConf.of(sc)), StorageLevels.fromName(storageLevelStreams),
                e.exportMillis());
    }

    /**
     * The paths of {@code data}'s export: reused when the same RDD was exported by the last fit of
     * this master (as the reference does: one export for many epochs), otherwise written now,
     * after deleting the previous export.
     */
    private synchronized <B> ExportedPaths exported(JavaSparkContext sc, JavaRDD<B> data, NetworkKind<?, B> kind) {
        if (lastExport != null && lastExport.rddId == data.id() && lastExport.sc == sc.sc()
                && lastExport.batchName.equals(kind.batchName())) {
            return new ExportedPaths(lastExport.paths, 0);
        }
        long start = System.nanoTime();
        deleteTempFiles(sc);
        String base = exportDirectory != null ? exportDirectory : DataSetExport.defaultBaseDirectory(sc);
        String fitId = "paramavg-" + UUID.randomUUID();
        JobDescriptions.part(sc, "exporting " + kind.batchName() + " objects");
        try {
            DataSetExport.Exported exported = DataSetExport.exportCounted(sc, data, base, fitId, kind);
            JavaRDD<String> paths = exported.paths();
            lastExport = new Export(data.id(), kind.batchName(), sc.sc(), base, fitId, paths);
            // the export's file counts per partition are known: no counting job for its paths
            lastSizes = new Sizes(paths.id(), sc.sc(), exported.sizes(), true);
            if (cleanup == null) {
                // the last export is removed when the JVM exits, so no run leaves files behind
                cleanup = new Thread(() -> deleteTempFiles((JavaSparkContext) null), "ferrodl-paramavg-export-cleanup");
                Runtime.getRuntime().addShutdownHook(cleanup);
            }
            // deleting the previous export and writing this one
            return new ExportedPaths(paths, (System.nanoTime() - start) / 1e6);
        } catch (RuntimeException e) {
            DataSetExport.delete(sc, base, fitId);
            throw e;
        }
    }

    /**
     * Deletes the data this master exported for its last fit (the Export approach keeps it so that
     * fitting the same RDD again, e.g. the next epoch, does not export it again). Also done when
     * another RDD is exported and when the JVM exits.
     *
     * @param sc the Spark context whose Hadoop configuration reaches the export directory, or null
     *     for the one the export was written with
     * @return true when there was nothing to delete or it was deleted
     */
    @Override
    public synchronized boolean deleteTempFiles(JavaSparkContext sc) {
        Export e = lastExport;
        if (e == null) {
            return true;
        }
        lastExport = null;
        try {
            List<String> problems = DataSetExport.delete(sc != null ? sc : new JavaSparkContext(e.sc), e.base, e.fitId);
            problems.forEach(p -> LOG.warn("ParameterAveragingTrainingMaster: {}", p));
            return problems.isEmpty();
        } catch (RuntimeException ex) {
            LOG.warn("ParameterAveragingTrainingMaster: could not delete the export {}/{}: {}", e.base, e.fitId,
                    ex.toString());
            return false;
        }
    }

    /**
     * The number of objects in each partition of {@code items}: one Spark job, remembered for the
     * next fit of the same RDD when it is persisted (its content does not change), so later epochs
     * start without counting jobs; the Export approach's paths are counted by the export itself.
     */
    private synchronized long[] partitionSizes(JavaRDD<?> items) {
        Sizes s = lastSizes;
        boolean stable = !items.getStorageLevel().equals(StorageLevel.NONE());
        if (s != null && (stable || s.exported()) && s.rddId() == items.id() && s.sc() == items.context()) {
            return s.sizes();
        }
        long[] sizes = DefaultRepartitioner.partitionSizes(items);
        lastSizes = stable ? new Sizes(items.id(), items.context(), sizes, false) : null;
        return sizes;
    }

    /**
     * Partition sizes of RDD {@code rddId}; {@code exported}: the RDD of an export's paths, built from
     * the driver's lists, so the sizes hold whatever its storage level.
     */
    private record Sizes(int rddId, org.apache.spark.SparkContext sc, long[] sizes, boolean exported) {
    }

    /** The paths a fit trains from and how long this fit spent exporting them (0: reused). */
    private record ExportedPaths(JavaRDD<String> paths, double exportMillis) {
    }

    /** Where the last fit's export lives (for reuse and deletion). */
    private record Export(int rddId, String batchName, org.apache.spark.SparkContext sc, String base, String fitId,
                          JavaRDD<String> paths) {
    }

    @Override
    public void executeTrainingPaths(SparkDl4jMultiLayer network, SparkComputationGraph graph, JavaRDD<String> paths,
                                     DataSetLoader dsLoader, MultiDataSetLoader mdsLoader) {
        LoadFunctions.requireOneNetwork(network, graph);
        StorageLevel level = StorageLevels.fromName(storageLevelStreams);
        if (network != null) {
            train(network, paths, LoadFunctions.loading(Objects.requireNonNull(dsLoader, "dsLoader"),
                    HadoopConf.of(network.getSparkContext())), level);
        } else {
            train(graph, paths, LoadFunctions.graphLoading(dsLoader, mdsLoader, HadoopConf.of(graph.getSparkContext())),
                    level);
        }
    }

    /** Whether objects stay in their RDD partition (one worker per partition) for this RDD. */
    private boolean keepsPartitions(int rddPartitions, int workers) {
        return repartition == Repartition.Never
                || (repartition == Repartition.NumPartitionsWorkersDiffers && rddPartitions == workers);
    }

    /**
     * Trains on the objects of {@code items}: minibatch objects ({@code loader == null}) or
     * references that {@code loader} turns into them on the workers.
     */
    private <N extends NativeHandleOwner & Model, B, T> void train(SparkNetwork<N, B> sparkNetwork, JavaRDD<T> items,
                                                              Function<T, B> loader, StorageLevel level) {
        train(sparkNetwork, items, loader, level, 0);
    }

    /**
     * {@link #train(SparkNetwork, JavaRDD, Function, StorageLevel)} of an export's paths that took
     * {@code exportMillis} to write just before (0: none written by this fit): the fit's time and
     * its breakdown include it.
     */
    private <N extends NativeHandleOwner & Model, B, T> void train(SparkNetwork<N, B> sparkNetwork, JavaRDD<T> items,
                                                              Function<T, B> loader, StorageLevel level,
                                                              double exportMillis) {
        long fitStart = System.nanoTime() - Math.round(exportMillis * 1e6);
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        N network = sparkNetwork.getNetwork();
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();
        int configuredWorkers = numWorkers != null ? numWorkers : sc.defaultParallelism();
        if (configuredWorkers <= 0) {
            throw new DL4JInvalidConfigException("numWorkers must be positive, got " + configuredWorkers);
        }
        int rddPartitions = items.getNumPartitions();
        boolean keep = keepsPartitions(rddPartitions, configuredWorkers);
        int workers = keep ? rddPartitions : configuredWorkers;

        JobDescriptions.part(sc, "counting " + kind.batchName() + " objects");
        long[] sizes = partitionSizes(items);
        long[] offsets = new long[sizes.length];
        long numObjects = 0;
        for (int p = 0; p < sizes.length; p++) {
            offsets[p] = numObjects;
            numObjects += sizes[p];
        }
        if (numObjects == 0) {
            throw new DL4JInvalidInputException("cannot fit: the training RDD is empty (0 " + kind.batchName()
                    + " objects)");
        }
        if (numObjects > Integer.MAX_VALUE) {
            throw new DL4JInvalidInputException("cannot fit: " + numObjects + " " + kind.batchName()
                    + " objects exceed " + Integer.MAX_VALUE + "; use larger " + kind.batchName() + " objects");
        }
        int objectsPerWorker = Math.max(1, batchSizePerWorker * averagingFrequency / rddDataSetNumExamples);
        BalancedSplitter splitter = new BalancedSplitter(numObjects, workers, objectsPerWorker);

        // the objects are read from the cached RDD itself (not from a copy persisted per fit)
        boolean sourceCached = !items.getStorageLevel().equals(StorageLevel.NONE())
                && (level == null || level.equals(StorageLevel.NONE()));
        // a cached RDD with one partition per worker: each worker's share of a split is taken from its
        // own partition (the reference's Balanced repartitioning leaves correctly sized partitions in
        // place), so its blocks never move; any other RDD is dealt in one order (RDD order or one
        // seeded shuffle) whatever its partitioning, so fit(String) equals fit(RDD) on the same data
        boolean inPlace = sourceCached && !keep && rddPartitions == workers
                && repartitionStrategy != RepartitionStrategy.SparkDefault;
        Long seed = rngSeed == null ? null : rngSeed + kind.epochCount(network);
        int[] order = inPlace ? BalancedSplitter.inPlacePositions(sizes, objectsPerWorker, seed)
                : seed == null ? null : BalancedSplitter.shuffledPositions((int) numObjects, seed);
        DealingOrder shuffle = DealingOrder.of(sc, order);
        // an object's index in RDD order is its partition's offset plus its index there
        JavaPairRDD<Placed, T> positioned = JavaPairRDD.fromJavaRDD(items.mapPartitionsWithIndex(
                (p, it) -> new Positioning<>(it, p, offsets[p], shuffle), true));
        if (level != null && !level.equals(StorageLevel.NONE())) {
            positioned = positioned.persist(level);
        }

        SparkTrainingStats stats = collectTrainingStats ? new SparkTrainingStats() : null;
        boolean sparkDefault = !keep && repartitionStrategy == RepartitionStrategy.SparkDefault;
        double score = Double.NaN;
        String oneJobRefused = AveragingRounds.whyNot(sc, workers, sparkDefault);
        if (oneJobRefused == null) {
            // every round in one Spark job, the workers averaging through the driver's relay (§9.2)
            try {
                score = AveragingRounds.train(sparkNetwork, positioned, loader, splitter, workers, keep,
                        sourceCached ? items.id() : -1,
                        // the blocks each worker reads: only where the cached RDD can be read in place
                        sourceCached && !keep && rddPartitions == workers
                                ? splitter.partitionsOfWorkers(sizes, order) : null, this,
                        List.copyOf(trainingHooks), stats, exportMillis,
                        (System.nanoTime() - fitStart) / 1e6 - exportMillis, fitStart);
            } finally {
                positioned.unpersist(false);
                if (shuffle != null) {
                    shuffle.destroy();
                }
            }
            kind.setCounters(network, kind.iterationCount(network), kind.epochCount(network) + 1);
            sparkNetwork.setScore(score);
            lastStats = stats;
            return;
        }
        LOG.info("ferrodl parameter averaging: one Spark job per split ({})", oneJobRefused);
        // One shuffle per fit deals every object to its (split, worker) partition; each split's job
        // then reads only its own partitions, so it is one stage with no shuffle of its own (a
        // shuffle per split cost about 20 ms of scheduling per worker iteration: BENCHMARKS.md).
        JavaPairRDD<Placed, T> dealt = sparkDefault ? null
                : positioned.partitionBy(new SplitWorkerPartitioner(splitter, workers, keep));
        List<TrainingHook> hooks = List.copyOf(trainingHooks);
        SplitClock clock = new SplitClock(exportMillis, (System.nanoTime() - fitStart) / 1e6 - exportMillis);
        try {
            for (int split = 0; split < splitter.numSplits(); split++) {
                long t0 = System.currentTimeMillis();
                long n0 = System.nanoTime();
                final int s = split;
                JobDescriptions.part(sc, "split " + (split + 1) + "/" + splitter.numSplits());
                Broadcast<NetworkSnapshot<N>> snapshot = sc.broadcast(NetworkSnapshot.of(kind, network, saveUpdater));
                long n1 = System.nanoTime();
                long jobStartWall = System.currentTimeMillis();
                JavaRDD<Tuple2<Placed, T>> share = sparkDefault
                        ? positioned.filter(p -> splitter.splitOf(p._1().position()) == s).repartition(workers).rdd()
                                .toJavaRDD()
                        : SplitWorkerPartitioner.split(dealt, s, workers);
                JavaRDD<AveragingAggregate> results = share.mapPartitionsWithIndex(
                        new ParameterAveragingWorker<>(kind, snapshot, loader, batchSizePerWorker, prefetchNumBatches,
                                s, saveUpdater, collectTrainingStats, hooks,
                                workerListeners(sparkNetwork), rddDataSetNumExamples), true);
                AveragingAggregate sum = results.treeAggregate(AveragingAggregate.empty(),
                        AveragingAggregate::add, AveragingAggregate::add, aggregationDepth);
                long jobEndWall = System.currentTimeMillis();
                long n2 = System.nanoTime();
                snapshot.destroy();
                if (sum.workers > 0) {
                    double[] paramSum = sum.paramSum();
                    double[] updaterSum = sum.updaterSum();
                    network.setParams(Nd4j.create(AveragingAggregate.mean(paramSum, sum.workers),
                            1, paramSum.length));
                    if (saveUpdater && updaterSum != null) {
                        kind.setUpdaterState(network, Nd4j.create(AveragingAggregate.mean(updaterSum,
                                sum.workers), 1, updaterSum.length));
                    }
                    // iterations, not minibatches: under truncated BPTT each segment is one
                    kind.setCounters(network, kind.iterationCount(network) + sum.maxIterations,
                            kind.epochCount(network));
                    score = sum.scoreSum / sum.workers;
                }
                if (stats != null) {
                    sum.stats.forEach(stats::addWorker);
                    stats.addSplitMillis(System.currentTimeMillis() - t0);
                    clock.add(sum.stats, (n1 - n0) / 1e6, jobStartWall, jobEndWall, (System.nanoTime() - n2) / 1e6);
                }
            }
        } finally {
            positioned.unpersist(false);
            if (shuffle != null) {
                shuffle.destroy();
            }
        }
        kind.setCounters(network, kind.iterationCount(network), kind.epochCount(network) + 1);
        sparkNetwork.setScore(score);
        if (stats != null) {
            stats.setTimeBreakdown(clock.breakdown((System.nanoTime() - fitStart) / 1e6));
        }
        lastStats = stats;
    }

    /**
     * The driver's data phases a fit's breakdown starts with: the export, when this fit wrote one
     * (fitting the same RDD again reuses it), then indexing, positioning and persisting.
     */
    static TimeBreakdown dataPhases(TimeBreakdown b, double exportMillis, double prepareMillis) {
        if (exportMillis > 0) {
            b.driver("data: export to files (once per RDD)", exportMillis);
        }
        return b.driver("data: index, position, persist", prepareMillis);
    }

    /** Sums the per-split phases of one fit for its {@link TimeBreakdown}. */
    static final class SplitClock {
        private final double exportMillis;
        private final double prepareMillis;
        private double snapshotMillis;
        private double startDelay;
        private double restore;
        private double data;
        private double fit;
        private double result;
        private double collect;
        private double apply;
        private long maxMinibatches;
        private long minibatches;

        SplitClock(double exportMillis, double prepareMillis) {
            this.exportMillis = exportMillis;
            this.prepareMillis = prepareMillis;
        }

        void add(List<SparkTrainingStats.WorkerStats> workers, double snapshotMillis, long jobStartWall,
                 long jobEndWall, double applyMillis) {
            this.snapshotMillis += snapshotMillis;
            this.apply += applyMillis;
            long lastEnd = jobStartWall;
            long most = 0;
            for (SparkTrainingStats.WorkerStats w : workers) {
                startDelay += Math.max(0, w.startTimeMillis() - jobStartWall);
                restore += w.restoreMillis();
                data += w.dataMillis();
                fit += w.fitMillis();
                result += w.resultMillis();
                minibatches += w.minibatches();
                most = Math.max(most, w.minibatches());
                lastEnd = Math.max(lastEnd, w.startTimeMillis() + w.totalMillis());
            }
            maxMinibatches += most;
            collect += Math.max(0, jobEndWall - lastEnd);
        }

        TimeBreakdown breakdown(double fitMillis) {
            return dataPhases(new TimeBreakdown("parameter averaging", fitMillis, maxMinibatches, minibatches),
                    exportMillis, prepareMillis)
                    .driver("snapshot + broadcast of params and updater state", snapshotMillis)
                    .worker("Spark scheduling, shuffle and task start", startDelay)
                    .worker("restore the network from the snapshot", restore)
                    .worker("wait for minibatches (load, deserialize, assemble)", data)
                    .worker("fit: forward, backward, updater (+ JNI, hooks)", fit)
                    .worker("extract params and updater state", result)
                    .driver("results to the driver + aggregation", collect)
                    .driver("average applied to the network", apply);
        }
    }

    /**
     * Gives each object of partition {@code p} its {@link Placed}: a static class, so that the task
     * closure carries its four fields and not the training master that built it.
     */
    private static final class Positioning<T> implements java.util.Iterator<Tuple2<Placed, T>> {
        private final java.util.Iterator<T> it;
        private final int partition;
        private final DealingOrder order;
        private long index;

        Positioning(java.util.Iterator<T> it, int partition, long offset, DealingOrder order) {
            this.it = it;
            this.partition = partition;
            this.index = offset;
            this.order = order;
        }

        @Override
        public boolean hasNext() {
            return it.hasNext();
        }

        @Override
        public Tuple2<Placed, T> next() {
            long i = index++;
            return new Tuple2<>(new Placed(order == null ? i : order.positionOf(i), partition), it.next());
        }
    }

    /**
     * Partition {@code split × workers + worker} for each object: the worker that owns its position
     * in its split (Balanced), or, with partitions kept, the worker of the RDD partition it came from.
     */
    static final class SplitWorkerPartitioner extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final BalancedSplitter splitter;
        private final int workers;
        private final boolean keep;

        SplitWorkerPartitioner(BalancedSplitter splitter, int workers, boolean keep) {
            this.splitter = splitter;
            this.workers = workers;
            this.keep = keep;
        }

        @Override
        public int numPartitions() {
            return splitter.numSplits() * workers;
        }

        @Override
        public int getPartition(Object key) {
            Placed p = (Placed) key;
            return splitter.splitOf(p.position()) * workers + (keep ? p.partition() : splitter.workerOf(p.position()));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SplitWorkerPartitioner w && w.workers == workers && w.keep == keep
                    && w.splitter == splitter;
        }

        @Override
        public int hashCode() {
            return Objects.hash(workers, keep, System.identityHashCode(splitter));
        }

        /** The {@code workers} partitions of split {@code split} of {@code dealt}, as their own RDD. */
        @SuppressWarnings("unchecked")
        static <T> JavaRDD<Tuple2<Placed, T>> split(JavaPairRDD<Placed, T> dealt, int split, int workers) {
            PartitionPruningRDD<Tuple2<Placed, T>> pruned = PartitionPruningRDD.create(dealt.rdd(),
                    new InSplit(split, workers));
            return new JavaRDD<>(pruned, (ClassTag<Tuple2<Placed, T>>) (ClassTag<?>) ClassTag$.MODULE$.apply(Tuple2.class));
        }
    }

    /** Keeps the partitions {@code split × workers ... split × workers + workers - 1}. */
    static final class InSplit extends AbstractFunction1<Object, Object> implements Serializable {
        private static final long serialVersionUID = 1L;
        private final int split;
        private final int workers;

        InSplit(int split, int workers) {
            this.split = split;
            this.workers = workers;
        }

        @Override
        public Object apply(Object partition) {
            return (Integer) partition / workers == split;
        }
    }

    // ------------------------------------------------------------------------- worker instances

    /**
     * A worker for {@code network}: its parameters (and updater state when {@code saveUpdater}) are
     * broadcast now, with this master's minibatch size, prefetching, statistics setting, hooks and
     * listeners. On an executor, {@code getInitialModel()} restores the network,
     * {@code processMinibatch(ds, net, isLast)} fits minibatches and returns the task's
     * {@link AveragingAggregate} on the last one; results merge with {@link AveragingAggregate#add}
     * and {@link AveragingAggregate#getParameters()} is their average. (The reference's worker is
     * used the same way; its fits split the data by {@code averagingFrequency} before the worker
     * sees it, as this master's fits do.)
     */
    @Override
    public ParameterAveragingWorker<?, ?, ?> getWorkerInstance(SparkDl4jMultiLayer network) {
        return workerInstance(Objects.requireNonNull(network, "network"));
    }

    /** As {@link #getWorkerInstance(SparkDl4jMultiLayer)} for a graph. */
    @Override
    public ParameterAveragingWorker<?, ?, ?> getWorkerInstance(SparkComputationGraph graph) {
        return workerInstance(Objects.requireNonNull(graph, "graph"));
    }

    private <N extends NativeHandleOwner & Model, B> ParameterAveragingWorker<N, B, B> workerInstance(
            SparkNetwork<N, B> sparkNetwork) {
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();
        Broadcast<NetworkSnapshot<N>> snapshot = sparkNetwork.getSparkContext()
                .broadcast(NetworkSnapshot.of(kind, sparkNetwork.getNetwork(), saveUpdater));
        return new ParameterAveragingWorker<>(kind, snapshot, null, batchSizePerWorker, prefetchNumBatches, 0,
                saveUpdater, collectTrainingStats, List.copyOf(trainingHooks), workerListeners(sparkNetwork),
                rddDataSetNumExamples);
    }

    /**
     * Listeners attached to every worker's network, after the wrapper's own
     * ({@code SparkDl4jMultiLayer.setListeners}); each must be serializable. Not part of the JSON.
     */
    @Override
    public void setListeners(Collection<TrainingListener> listeners) {
        this.listeners = SparkListeners.checked(listeners);
    }

    /** What every worker attaches: the wrapper's listeners, then this master's. */
    List<TrainingListener> workerListeners(SparkNetwork<?, ?> sparkNetwork) {
        return SparkListeners.forWorkers(sparkNetwork.getListeners(), listeners);
    }

    // ------------------------------------------------------------------------------------ hooks

    /** Adds a hook run on every worker around each minibatch update (see {@link TrainingHook}). */
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

    // ------------------------------------------------------------------------- configuration API

    public Integer getNumWorkers() {
        return numWorkers;
    }

    @Override
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

    public StorageLevel getStorageLevelStreams() {
        return StorageLevels.fromName(storageLevelStreams);
    }

    public RDDTrainingApproach getRddTrainingApproach() {
        return rddTrainingApproach;
    }

    /** Base directory of the Export approach; null: {@code ${hadoop.tmp.dir}/ferrodl}. */
    public String getExportDirectory() {
        return exportDirectory;
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
        for (Object[] o : new Object[][] {{"repartition", repartition}, {"repartitionStrategy", repartitionStrategy},
                {"rddTrainingApproach", rddTrainingApproach}, {"storageLevelStreams", storageLevelStreams}}) {
            if (o[1] == null) {
                throw new DL4JInvalidConfigException("ParameterAveragingTrainingMaster option " + o[0]
                        + " must not be null");
            }
        }
        if (trainingHooks == null || trainingHooks.contains(null)) {
            throw new DL4JInvalidConfigException("ParameterAveragingTrainingMaster trainingHooks must be a list of "
                    + "hooks without nulls");
        }
        trainingHooks = new ArrayList<>(trainingHooks);
        StorageLevels.fromName(storageLevel);
        StorageLevels.fromName(storageLevelStreams);
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
                && Objects.equals(storageLevelStreams, m.storageLevelStreams)
                && rddTrainingApproach == m.rddTrainingApproach && Objects.equals(exportDirectory, m.exportDirectory)
                && Objects.equals(rngSeed, m.rngSeed) && collectTrainingStats == m.collectTrainingStats
                && Objects.equals(trainingHooks, m.trainingHooks);
    }

    @Override
    public int hashCode() {
        return Objects.hash(numWorkers, rddDataSetNumExamples, batchSizePerWorker, averagingFrequency,
                aggregationDepth, saveUpdater, prefetchNumBatches, repartition, repartitionStrategy, storageLevel,
                storageLevelStreams, rddTrainingApproach, exportDirectory, rngSeed, collectTrainingStats,
                trainingHooks);
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
        private StorageLevel storageLevelStreams = StorageLevel.MEMORY_ONLY();
        private RDDTrainingApproach rddTrainingApproach = RDDTrainingApproach.Export;
        private String exportDirectory;
        private Long rngSeed;
        private boolean collectTrainingStats;
        private final List<TrainingHook> trainingHooks = new ArrayList<>();

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

        /** How to redistribute data (default {@link RepartitionStrategy#Balanced}). */
        public Builder repartitionStrategy(RepartitionStrategy repartitionStrategy) {
            this.repartitionStrategy = Objects.requireNonNull(repartitionStrategy, "repartitionStrategy");
            return this;
        }

        /**
         * Storage level of the dealt DataSets with {@link RDDTrainingApproach#Direct} (default
         * MEMORY_ONLY_SER; null: no persistence).
         */
        public Builder storageLevel(StorageLevel storageLevel) {
            StorageLevels.name(storageLevel); // refuses levels without a constant name, early
            this.storageLevel = storageLevel;
            return this;
        }

        /**
         * Storage level of the dealt paths when training from files ({@code fit(String)},
         * {@code fitPaths}, the Export approach); default MEMORY_ONLY.
         */
        public Builder storageLevelStreams(StorageLevel storageLevelStreams) {
            Objects.requireNonNull(storageLevelStreams, "storageLevelStreams");
            StorageLevels.name(storageLevelStreams);
            this.storageLevelStreams = storageLevelStreams;
            return this;
        }

        /** How an {@code RDD<DataSet>} is consumed (default {@link RDDTrainingApproach#Export}). */
        public Builder rddTrainingApproach(RDDTrainingApproach rddTrainingApproach) {
            this.rddTrainingApproach = Objects.requireNonNull(rddTrainingApproach, "rddTrainingApproach");
            return this;
        }

        /**
         * Base directory of the Export approach, shared by driver and executors (for example an
         * {@code hdfs://} URI); each fit writes to {@code <exportDirectory>/<unique id>/} and deletes
         * it afterwards. Default null: {@code ${hadoop.tmp.dir}/ferrodl}.
         */
        public Builder exportDirectory(String exportDirectory) {
            if (exportDirectory != null && exportDirectory.isBlank()) {
                throw new DL4JInvalidConfigException("ParameterAveragingTrainingMaster option exportDirectory must "
                        + "not be blank (use null for the default)");
            }
            this.exportDirectory = exportDirectory;
            return this;
        }

        /** Seed of the shuffle that orders the data before it is dealt (default: no shuffle, RDD order). */
        public Builder rngSeed(long rngSeed) {
            this.rngSeed = rngSeed;
            return this;
        }

        /** Collect per-worker statistics (default false). */
        public Builder collectTrainingStats(boolean collectTrainingStats) {
            this.collectTrainingStats = collectTrainingStats;
            return this;
        }

        /** Adds hooks run on every worker around each minibatch update. */
        public Builder trainingHooks(Collection<TrainingHook> trainingHooks) {
            for (TrainingHook h : Objects.requireNonNull(trainingHooks, "trainingHooks")) {
                this.trainingHooks.add(Objects.requireNonNull(h, "training hook"));
            }
            return this;
        }

        /** Adds hooks run on every worker around each minibatch update. */
        public Builder trainingHooks(TrainingHook... hooks) {
            return trainingHooks(Arrays.asList(Objects.requireNonNull(hooks, "hooks")));
        }

        public ParameterAveragingTrainingMaster build() {
            return new ParameterAveragingTrainingMaster(this);
        }
    }
}
