package org.ferrodl.spark.impl.paramavg;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import org.apache.spark.Partitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.rdd.RDD;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.jni.NativeAveraging;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.impl.common.BalancedSplitter;
import org.ferrodl.spark.impl.common.CachedBlocksRDD;
import org.ferrodl.spark.impl.common.JobDescriptions;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.SparkNetwork;
import org.ferrodl.spark.parameterserver.training.RelayTrust;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Every averaging round of one parameter-averaging fit inside one Spark job (docs/ARCHITECTURE.md
 * §9.2): one barrier task per worker holds its network for the whole fit and the workers average
 * through the driver's relay after each split ({@link AveragingRoundsWorker}, crate
 * {@code ferrodl-averaging}), instead of one Spark job, one broadcast and one set of task results
 * per split. Same splits, shares, minibatches, hooks, counters, score and arithmetic (sum in
 * partition order in double, divided by the workers that fitted, rounded to float) as the
 * per-split jobs, which remain for what this cannot serve ({@link #whyNot}).
 */
final class AveragingRounds {
    private static final Logger LOG = LoggerFactory.getLogger(AveragingRounds.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * {@code false} keeps parameter averaging on one Spark job per split: a Spark configuration
     * key, or a local property of the fitting thread ({@code sc.setLocalProperty}), which wins (the
     * escape hatch, and how the tests compare both).
     */
    static final String ROUNDS_IN_ONE_JOB = "spark.ferrodl.paramavg.roundsInOneJob";
    /**
     * On a cluster, the most workers for which a cached training RDD is dealt in place ({@link DealtRDD}:
     * every task reads every cached block, workers - 1 of them from other executors) rather than with a
     * shuffle per fit (a stage more, every object serialized, written to disk and read back once). At 2
     * workers both move the same bytes between executors and the shuffle's stage and disk write go
     * (BENCHMARKS.md, issue 15); with more workers the fetches grow as workers x the data. 0: always a
     * shuffle on a cluster. local[N] reads in place whatever the number (every block is in its JVM).
     */
    static final String DEAL_IN_PLACE_MAX_WORKERS = "spark.ferrodl.paramavg.dealInPlaceMaxWorkers";
    /**
     * {@code false}: on local[N] too the workers exchange through the relay's sockets rather than
     * the driver's in-process hub (same messages and arithmetic; for comparison). A Spark
     * configuration key, or a local property of the fitting thread, which wins.
     */
    static final String IN_PROCESS = "spark.ferrodl.paramavg.inProcess";
    /**
     * {@code false}: every worker task builds its network from the configuration, as each fit's
     * tasks did before; by default a task keeps it in its JVM for the next fit of the same
     * configuration ({@link KeptNetworks}). Results are the same either way. A Spark configuration
     * key, or a local property of the fitting thread, which wins.
     */
    static final String KEEP_NETWORKS = "spark.ferrodl.paramavg.keepNetworks";
    /** How long a worker waits for the others in one round, and the relay's I/O timeout. */
    static final String ROUND_TIMEOUT_MS = "spark.ferrodl.paramavg.roundTimeoutMs";

    private AveragingRounds() {
    }

    /**
     * Why this fit runs one job per split instead, or null when the rounds can run in one job:
     * they need every worker task running at once (a barrier stage: at least as many task slots
     * as workers, no dynamic allocation) and a relay the cluster's Spark security settings allow
     * ({@link RelayTrust}); Spark's own random repartitioning per split cannot be dealt in advance.
     */
    static String whyNot(JavaSparkContext sc, int workers, boolean sparkDefaultRepartition) {
        SparkConf conf = sc.getConf();
        String local = sc.getLocalProperty(ROUNDS_IN_ONE_JOB);
        if (local != null ? !Boolean.parseBoolean(local) : !conf.getBoolean(ROUNDS_IN_ONE_JOB, true)) {
            return ROUNDS_IN_ONE_JOB + "=false";
        }
        if (sparkDefaultRepartition) {
            return "RepartitionStrategy.SparkDefault deals every split with Spark's repartition";
        }
        if (conf.getBoolean("spark.dynamicAllocation.enabled", false)) {
            return "spark.dynamicAllocation.enabled=true (a barrier stage needs its executors fixed)";
        }
        int slots = taskSlots(sc);
        if (workers > slots) {
            return workers + " workers but " + slots + " task slots (every worker task must run at once)";
        }
        try {
            RelayTrust.check(conf, sc.master(), false);
        } catch (DL4JInvalidConfigException e) {
            return "spark.authenticate is false on master " + sc.master() + " (the relay's secret would travel "
                    + "unprotected; set spark.authenticate=true, or " + RelayTrust.ALLOW_WITHOUT_AUTHENTICATION
                    + "=true where every process that can reach the cluster is trusted)";
        }
        return null;
    }

    private static boolean inProcess(JavaSparkContext sc) {
        return flag(sc, IN_PROCESS);
    }

    /** A boolean setting, true unless set otherwise: the fitting thread's local property, else the configuration. */
    private static boolean flag(JavaSparkContext sc, String key) {
        String local = sc.getLocalProperty(key);
        return local != null ? Boolean.parseBoolean(local) : sc.getConf().getBoolean(key, true);
    }

    /** Tasks that can run at once: local[N] threads, else the cores Spark reports, per spark.task.cpus. */
    static int taskSlots(JavaSparkContext sc) {
        String master = sc.master();
        int cores;
        if (master.equals("local")) {
            cores = 1;
        } else if (master.startsWith("local[")) {
            String n = master.substring(6, master.indexOf(']') < 0 ? master.length() : master.indexOf(']')).split(",")[0];
            cores = n.equals("*") ? Runtime.getRuntime().availableProcessors() : Integer.parseInt(n.trim());
        } else {
            // the registered executors' cores: Spark's default parallelism unless it is overridden, else
            // executors (the status tracker lists the driver too) times spark.executor.cores
            cores = !sc.getConf().contains("spark.default.parallelism") ? sc.defaultParallelism()
                    : (sc.sc().statusTracker().getExecutorInfos().length - 1)
                            * sc.getConf().getInt("spark.executor.cores", 1);
        }
        return Math.max(1, cores / Math.max(1, sc.getConf().getInt("spark.task.cpus", 1)));
    }

    /**
     * The result of a fit: the network's new score (NaN when no worker fitted).
     * {@code partitionsOfWorkers}: per worker, the cached partitions its objects are in; given (not
     * null) whenever {@code cachedSourceId >= 0}, the RDD is not kept and has one partition per worker.
     */
    static <N extends NativeHandleOwner & Model, B, T> double train(
            SparkNetwork<N, B> sparkNetwork, JavaPairRDD<Placed, T> positioned, Function<T, B> loader,
            BalancedSplitter splitter, int workers, boolean keep, int cachedSourceId, int[][] partitionsOfWorkers,
            ParameterAveragingTrainingMaster master,
            List<TrainingHook> hooks, SparkTrainingStats stats, double exportMillis, double prepareMillis,
            long fitStart) {
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        N network = sparkNetwork.getNetwork();
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();
        long setupStart = System.nanoTime();
        RelayTrust trust = RelayTrust.check(sc.getConf(), sc.master(), false);
        if (trust.warning() != null) {
            LOG.warn(trust.warning().replace("gradient sharing", "parameter averaging"));
        }
        long timeoutMs = sc.getConf().getLong(ROUND_TIMEOUT_MS, 600_000L);
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        String secretHex = HexFormat.of().formatHex(secret);
        long paramCount = network.numParams();
        long values = paramCount + (master.isSaveUpdater() ? kind.updaterState(network).length() : 0L);
        long maxMessageBytes = 64L + 4L * values;
        String bindHost = trust.localMaster() ? "127.0.0.1" : "0.0.0.0";
        String advertisedHost = trust.localMaster() ? "127.0.0.1" : sc.getConf().get("spark.driver.host", "127.0.0.1");
        // the workers start from the network's arrays, which the relay hands each of them when it
        // connects (a Spark broadcast of its own cost each task 45-60 ms to read on the bench cluster);
        // on local[N] every task runs in this JVM: the workers exchange through the driver's in-process
        // hub (no sockets, no copies through the relay's threads); the relay stays for anything else
        long relay = NativeAveraging.startRelay(relaySettings(bindHost, secretHex, maxMessageBytes, timeoutMs,
                trust.encrypt(), sc.isLocal() && inProcess(sc)), workers, splitter.numSplits(), network.nativeHandle(),
                master.isSaveUpdater());
        DealtRDD<T> dealtInPlace = null;
        try {
            String address = advertisedHost + ":" + NativeAveraging.port(relay);
            // small: it travels inside the tasks (no broadcast of its own to read)
            AveragingRoundsWorker.Spec spec = new AveragingRoundsWorker.Spec(kind.configurationJson(network),
                    Math.toIntExact(paramCount), kind.iterationCount(network), kind.epochCount(network), address,
                    secretHex, trust.encrypt(), timeoutMs, timeoutMs, maxMessageBytes, flag(sc, KEEP_NETWORKS));
            AveragingRoundsWorker<N, B, T> worker = new AveragingRoundsWorker<>(kind, spec, loader, splitter, workers,
                    master.getBatchSizePerWorker(), master.getPrefetchNumBatches(), master.isSaveUpdater(),
                    stats != null, hooks, master.workerListeners(sparkNetwork));
            // kept partitions are already dealt (partition p = worker p), and a cached RDD with one
            // partition per worker is dealt by reading its blocks in place (DealtRDD): no shuffle per fit,
            // which serializes, writes and reads back every minibatch object. Each task reads only the
            // blocks its objects are in (its own when the partitions are equal); on a cluster a task
            // whose objects cross over fetches the other executor's whole block: few workers only.
            WorkerPartitioner dealer = new WorkerPartitioner(splitter, workers, keep);
            if (!keep && cachedSourceId >= 0 && positioned.getNumPartitions() == workers) {
                if (sc.isLocal()) {
                    dealtInPlace = new DealtRDD<>(positioned.rdd(), dealer, partitionsOfWorkers, cachedSourceId, null, true);
                } else if (workers <= sc.getConf().getInt(DEAL_IN_PLACE_MAX_WORKERS, 2)) {
                    String[][] where = CachedBlocksRDD.blockLocations(cachedSourceId, workers);
                    if (where != null) {
                        dealtInPlace = new DealtRDD<>(positioned.rdd(), dealer, partitionsOfWorkers, cachedSourceId, where, false);
                    } else {
                        LOG.info("ferrodl parameter averaging: RDD {} is not fully cached; dealt with a shuffle",
                                cachedSourceId);
                    }
                }
            }
            RDD<Tuple2<Placed, T>> dealt = keep && positioned.getNumPartitions() == workers ? positioned.rdd()
                    : dealtInPlace != null ? dealtInPlace : positioned.partitionBy(dealer).rdd();
            JobDescriptions.part(sc, "splits 1-" + splitter.numSplits() + "/" + splitter.numSplits()
                    + " (averaging rounds of " + workers + " workers in one job)");
            double setupMillis = (System.nanoTime() - setupStart) / 1e6;
            long jobStartWall = System.currentTimeMillis();
            RDD<AveragingRoundsWorker.Result> results = dealt.barrier().mapPartitions(worker, false, tag());
            AveragingRoundsWorker.Result[] reports = (AveragingRoundsWorker.Result[]) results.collect();
            long jobEndWall = System.currentTimeMillis();
            long applyStart = System.nanoTime();

            // every worker's messages were applied to the relay's state before its task ended
            NativeAveraging.shutdown(relay);
            double[] summary = NativeAveraging.finalSummary(relay);
            // straight into the network's engine arrays (the updater state only when it was averaged)
            double score = NativeAveraging.applyFinal(relay, network.nativeHandle(), master.isSaveUpdater()) != 0
                    ? summary[3] : Double.NaN;
            kind.setCounters(network, kind.iterationCount(network) + (int) summary[1], kind.epochCount(network));
            if (stats != null) {
                stats.setRelayStatsJson(NativeAveraging.statsJson(relay));
                stats.setParameterCount(paramCount);
                fillStats(stats, reports, exportMillis, prepareMillis, setupMillis, jobStartWall, jobEndWall,
                        (System.nanoTime() - applyStart) / 1e6, (System.nanoTime() - fitStart) / 1e6);
            }
            LOG.info("ferrodl parameter averaging: {} rounds of {} workers in one job, relay {}", (int) summary[0],
                    workers, NativeAveraging.statsJson(relay));
            return score;
        } finally {
            if (dealtInPlace != null) {
                dealtInPlace.release();
            }
            NativeAveraging.destroyRelay(relay);
        }
    }

    private static void fillStats(SparkTrainingStats stats, AveragingRoundsWorker.Result[] reports,
                                  double exportMillis, double prepareMillis, double setupMillis, long jobStartWall,
                                  long jobEndWall, double applyMillis, double fitMillis) {
        double start = 0;
        double share = 0;
        double restore = 0;
        double connect = 0;
        double barrier = 0;
        double data = 0;
        double fit = 0;
        double extract = 0;
        double exchange = 0;
        double apply = 0;
        long minibatches = 0;
        long most = 0;
        long lastEnd = jobStartWall;
        for (AveragingRoundsWorker.Result r : reports) {
            r.stats().forEach(stats::addWorker);
            start += Math.max(0, r.startWallMillis() - jobStartWall);
            share += r.shareMillis();
            restore += r.restoreMillis();
            connect += r.connectMillis();
            barrier += r.barrierMillis();
            data += r.dataMillis();
            fit += r.fitMillis();
            extract += r.extractMillis();
            exchange += r.exchangeMillis();
            apply += r.applyMillis();
            minibatches += r.minibatches();
            most = Math.max(most, r.minibatches());
            lastEnd = Math.max(lastEnd, r.endWallMillis());
        }
        // a split's time: its slowest worker's round (fit, exchange, average)
        int rounds = reports.length == 0 ? 0 : reports[0].roundMillis().length;
        for (int round = 0; round < rounds; round++) {
            double slowest = 0;
            for (AveragingRoundsWorker.Result r : reports) {
                slowest = Math.max(slowest, r.roundMillis()[round]);
            }
            stats.addSplitMillis(Math.round(slowest));
        }
        stats.setTimeBreakdown(ParameterAveragingTrainingMaster.dataPhases(
                        new TimeBreakdown("parameter averaging, rounds in one job", fitMillis, most, minibatches),
                        exportMillis, prepareMillis)
                .driver("relay start with the network's state (once per fit)", setupMillis)
                .worker("Spark scheduling, shuffle and task start", start)
                .worker("read the task's share (shuffle read, once per task)", share)
                .worker("restore the network from the relay's start state (once per task)", restore)
                .worker("connect to the relay (once per task)", connect)
                .worker("wait for every task to connect (hello through the relay, once per task)", barrier)
                .worker("wait for minibatches (load, deserialize, assemble)", data)
                .worker("fit: forward, backward, updater (+ JNI, hooks)", fit)
                .worker("send: encode params + updater state from the engine, queue", extract)
                .worker("exchange: wait for every worker's message of the round", exchange)
                .worker("average into the engine's params + updater state", apply)
                .driver("task end to job end (results to the driver)", Math.max(0, jobEndWall - lastEnd))
                .driver("final average applied to the network", applyMillis));
    }

    private static String relaySettings(String bindHost, String secretHex, long maxMessageBytes, long timeoutMs,
                                        boolean encrypt, boolean inProcess) {
        ObjectNode s = JSON.createObjectNode();
        s.put("inProcess", inProcess);
        s.put("bindHost", bindHost);
        s.put("encrypt", encrypt);
        s.putNull("portFrom");
        s.putNull("portTo");
        s.put("secretHex", secretHex);
        s.put("maxMessageBytes", maxMessageBytes);
        // a round's messages per connection: the relay holds at most a few (workers wait per round)
        s.put("queueLimit", 8);
        s.put("ioTimeoutMs", timeoutMs);
        s.put("handshakeTimeoutMs", Math.min(5_000L, timeoutMs));
        return s.toString();
    }

    @SuppressWarnings("unchecked")
    private static ClassTag<AveragingRoundsWorker.Result> tag() {
        return (ClassTag<AveragingRoundsWorker.Result>) (ClassTag<?>) ClassTag$.MODULE$.apply(
                AveragingRoundsWorker.Result.class);
    }

    /** Partition {@code worker} for each object: its worker in its split, or its RDD partition when kept. */
    static final class WorkerPartitioner extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final BalancedSplitter splitter;
        private final int workers;
        private final boolean keep;

        WorkerPartitioner(BalancedSplitter splitter, int workers, boolean keep) {
            this.splitter = splitter;
            this.workers = workers;
            this.keep = keep;
        }

        @Override
        public int numPartitions() {
            return workers;
        }

        @Override
        public int getPartition(Object key) {
            Placed p = (Placed) key;
            return keep ? p.partition() : splitter.workerOf(p.position());
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof WorkerPartitioner w && w.workers == workers && w.keep == keep && w.splitter == splitter;
        }

        @Override
        public int hashCode() {
            return Objects.hash(workers, keep, System.identityHashCode(splitter));
        }
    }
}
