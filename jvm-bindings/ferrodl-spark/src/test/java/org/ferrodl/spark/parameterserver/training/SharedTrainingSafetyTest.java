package org.ferrodl.spark.parameterserver.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fit against hostile or broken surroundings: a connection flood, a stalled worker, an open cluster. */
class SharedTrainingSafetyTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * Keeps about {@code open} strangers connected to 127.0.0.1:port (10 new ones every 20 ms, the
     * oldest closed): idle ones, garbage, and slow-loris AUTH prefixes. Connection refusals (no
     * relay listening between fits) are ignored. Returns how many connected.
     */
    private static Thread flood(int port, int open, AtomicBoolean stop, AtomicLong connected) {
        Thread t = new Thread(() -> {
            ArrayDeque<Socket> live = new ArrayDeque<>();
            long i = 0;
            while (!stop.get()) {
                for (int k = 0; k < 10; k++, i++) {
                    try {
                        Socket s = new Socket();
                        s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                        OutputStream out = s.getOutputStream();
                        if (i % 3 == 1) {
                            out.write(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
                        } else if (i % 3 == 2) {
                            out.write("FDL".getBytes());
                        }
                        live.add(s);
                        connected.incrementAndGet();
                    } catch (IOException e) {
                        // no relay listening right now
                    }
                    while (live.size() > open) {
                        closeQuietly(live.poll());
                    }
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    break;
                }
            }
            live.forEach(SharedTrainingSafetyTest::closeQuietly);
        }, "stranger-flood");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing a stranger
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void fitsCompleteWhileHundredsOfStrangersFloodTheRelay() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        int port = freePort();
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(8).batchSizePerWorker(16)
                .rddTrainingApproach(RDDTrainingApproach.Direct).collectTrainingStats(true).rngSeed(1)
                .relayPortRange(port, port).debugLongerIterations(15).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        JavaRDD<DataSet> train = sc.parallelize(SharedTrainingMasterTest.separable(400, 8, 3), 4);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong connected = new AtomicLong();
        // The flood is on before the first fit starts its relay and goes on through both fits.
        Thread flooder = flood(port, 300, stop, connected);
        try {
            long rejected = 0;
            for (int fit = 0; fit < 3; fit++) {
                net.fit(train);
                JsonNode relay = JSON.readTree(tm.getTrainingStats().getRelayStatsJson());
                assertEquals(4, relay.get("connectionsAccepted").asLong(), relay.toString());
                assertEquals(0, relay.get("connectionsAborted").asLong(), relay.toString());
                assertEquals(0, relay.get("messagesDropped").asLong(), relay.toString());
                rejected += relay.get("connectionsRejected").asLong();
            }
            // ~500 strangers per second for the ~1.5 s of each fit (100 minibatches of 15 ms and more)
            assertTrue(rejected >= 300, "strangers rejected while the fits ran: " + rejected);
        } finally {
            stop.set(true);
            flooder.join();
        }
        assertTrue(connected.get() >= 300, "strangers connected: " + connected.get());
        Evaluation eval = net.evaluate(sc.parallelize(SharedTrainingMasterTest.separable(50, 8, 99), 2));
        assertTrue(eval.accuracy() >= 0.85, "accuracy " + eval.accuracy());
    }

    /** Partition 0 yields {@code n} DataSets and then blocks (interruptibly) as a stuck source would. */
    private static Iterator<DataSet> blockingAfter(Iterator<DataSet> it, int n) {
        return new Iterator<>() {
            int given;

            @Override
            public boolean hasNext() {
                if (given >= n) {
                    try {
                        Thread.sleep(600_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("blocking source interrupted");
                    }
                }
                return it.hasNext();
            }

            @Override
            public DataSet next() {
                given++;
                return it.next();
            }
        };
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aWorkerWhoseDataSourceBlocksFailsTheFitNamingItsExecutorHostPartitionAndLastStep() {
        JavaSparkContext sc = SparkTestSupport.sc();
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(8).batchSizePerWorker(8)
                .rddTrainingApproach(RDDTrainingApproach.Direct).storageLevel(null).repartitioner(null)
                .workerPrefetchNumBatches(0).workerStallTimeoutMs(1500).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        JavaRDD<DataSet> data = sc.parallelize(SharedTrainingMasterTest.separable(16, 8, 3), 2)
                .mapPartitionsWithIndex((p, it) -> p == 0 ? blockingAfter(it, 3) : it, true);
        long t0 = System.nanoTime();
        WorkerStalledException e = assertThrows(WorkerStalledException.class, () -> net.fit(data));
        long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
        String m = e.getMessage();
        assertTrue(m.contains("partition 0 (attempt 0"), m);
        assertTrue(m.contains("executor driver on host 127.0.0.1 (partition 0, attempt 0, Spark task"), m);
        assertTrue(m.matches("(?s).*no progress for \\d+ ms \\(workerStallTimeoutMs 1500\\).*"), m);
        assertTrue(m.contains("last: waiting for minibatch 4 from the data source (3 minibatches trained)"), m);
        assertTrue(m.contains("workerStallTimeoutMs"), m);
        assertTrue(seconds < 30, "took " + seconds + " s");
        // The stuck task was interrupted: the executor's cores are free for the next job.
        assertEquals(8, sc.parallelize(List.of(1, 2, 3, 4, 5, 6, 7, 8), 4).count());
    }

    @Test
    void anOpenNonLocalClusterIsRefusedUnlessAllowedAndNetworkCryptoSealsTheRelay() {
        SparkConf open = new SparkConf(false);
        DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class,
                () -> RelayTrust.check(open, "spark://10.0.0.1:7077", false));
        assertTrue(e.getMessage().contains("spark.authenticate is false on master spark://10.0.0.1:7077"), e.getMessage());
        assertTrue(e.getMessage().contains("relayAllowWithoutSparkAuthentication(true)"), e.getMessage());
        assertThrows(DL4JInvalidConfigException.class, () -> RelayTrust.check(open, "yarn", false));
        // local-cluster executors are separate JVMs fetching the broadcast over the network
        assertThrows(DL4JInvalidConfigException.class, () -> RelayTrust.check(open, "local-cluster[2,1,1024]", false));
        RelayTrust byConf = RelayTrust.check(new SparkConf(false)
                .set("spark.ferrodl.relay.allowWithoutSparkAuthentication", "true"), "yarn", false);
        assertNotNull(byConf.warning());
        RelayTrust allowed = RelayTrust.check(open, "yarn", true);
        assertNotNull(allowed.warning());
        assertTrue(allowed.warning().contains("allowed by relayAllowWithoutSparkAuthentication"), allowed.warning());
        assertTrue(!allowed.encrypt() && !allowed.localMaster());
        for (String local : new String[] {"local", "local[4]", "local[*]", "local[2,3]"}) {
            RelayTrust t = RelayTrust.check(open, local, false);
            assertTrue(t.localMaster() && t.warning() == null, local);
        }
        SparkConf secure = new SparkConf(false).set("spark.authenticate", "true")
                .set("spark.network.crypto.enabled", "true");
        RelayTrust t = RelayTrust.check(secure, "spark://10.0.0.1:7077", false);
        assertNull(t.warning());
        assertTrue(t.encrypt());
        assertTrue(!RelayTrust.check(new SparkConf(false).set("spark.authenticate", "true"), "yarn", false).encrypt());
    }
}
