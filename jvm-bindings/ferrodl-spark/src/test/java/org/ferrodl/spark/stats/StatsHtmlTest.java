package org.ferrodl.spark.stats;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;
import org.ferrodl.spark.impl.graph.SparkComputationGraphTest;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The training-statistics page of both masters, each with a MultiLayerNetwork (SparkDl4jMultiLayer
 * on DataSets) and a ComputationGraph (SparkComputationGraph, two inputs and two outputs, on
 * MultiDataSets), rendered in headless Chromium (Debian's {@code chromium} package): the screenshot
 * is not blank and every chart drew its data points. About 4-8 s per page at load 15.
 */
class StatsHtmlTest {

    private static File chromium() {
        for (String p : new String[] {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
            if (new File(p).canExecute()) {
                return new File(p);
            }
        }
        return null;
    }

    private static String run(File tmp, String... args) throws IOException, InterruptedException {
        File out = new File(tmp, "chromium-" + System.nanoTime() + ".out");
        ProcessBuilder pb = new ProcessBuilder(args).redirectErrorStream(false).redirectOutput(out)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("HOME", tmp.getAbsolutePath());
        Process p = pb.start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "chromium did not finish in 120 s");
        assertEquals(0, p.exitValue(), "chromium exit status");
        return Files.readString(out.toPath(), StandardCharsets.UTF_8);
    }

    /** Renders {@code page}: the chart summary from the live DOM, and checks on a screenshot. */
    private static Map<String, int[]> render(File page, File tmp) throws Exception {
        File browser = chromium();
        Assumptions.assumeTrue(browser != null, "headless Chromium is needed to render the page: apt-get install chromium");
        String[] common = {browser.getAbsolutePath(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--user-data-dir=" + new File(tmp, "profile-" + System.nanoTime())};
        String dom = run(tmp, concat(common, "--virtual-time-budget=5000", "--dump-dom", page.toURI().toString()));
        Map<String, int[]> charts = new HashMap<>();
        Matcher m = Pattern.compile("chart (\\S+) datasets=(\\d+) points=(\\d+)").matcher(dom);
        while (m.find()) {
            charts.put(m.group(1), new int[] {Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))});
        }
        File png = new File(tmp, page.getName() + ".png");
        run(tmp, concat(common, "--hide-scrollbars", "--window-size=1200,1800", "--screenshot=" + png.getAbsolutePath(),
                page.toURI().toString()));
        String keep = System.getProperty("ferrodl.stats.screenshotDir"); // to look at the pages by eye
        if (keep != null) {
            Files.copy(png.toPath(), new File(keep, png.getName()).toPath(),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        BufferedImage img = ImageIO.read(png);
        assertNotNull(img, "screenshot");
        Set<Integer> colors = new HashSet<>();
        long nonWhite = 0;
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                int rgb = img.getRGB(x, y) & 0xffffff;
                colors.add(rgb);
                if (rgb != 0xffffff) {
                    nonWhite++;
                }
            }
        }
        double fraction = nonWhite / (img.getWidth() * img.getHeight() / 4.0);
        assertTrue(fraction > 0.03, "screenshot is nearly blank: " + fraction + " non-white");
        assertTrue(colors.size() > 50, "screenshot has only " + colors.size() + " colours");
        return charts;
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /**
     * Fits {@code count} objects of 4 examples in {@code partitions} partitions with statistics on
     * (the wrapper's switch, which works for either master): a MultiLayerNetwork on DataSets, or
     * the two-input, two-output graph on MultiDataSets.
     */
    private static SparkTrainingStats fit(boolean graph, TrainingMaster<?, ?> tm, IUpdater updater, int count,
                                          long seed, int partitions) {
        if (graph) {
            SparkComputationGraph spark = new SparkComputationGraph(sc(),
                    SparkComputationGraphTest.twoByTwo(updater, 0), tm);
            spark.setCollectTrainingStats(true);
            spark.fitMultiDataSet(sc().parallelize(SparkComputationGraphTest.twoByTwoData(count, 4, seed), partitions));
            return spark.getSparkTrainingStats();
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(updater, 0), tm);
        spark.setCollectTrainingStats(true);
        spark.fit(sc().parallelize(data(count, 4, seed), partitions));
        return spark.getSparkTrainingStats();
    }

    @Test
    void parameterAveragingPageDrawsTimelineHistogramsAndSplits(@TempDir File tmp) throws Exception {
        parameterAveragingPage(false, tmp);
    }

    @Test
    void parameterAveragingPageOfAGraphFit(@TempDir File tmp) throws Exception {
        parameterAveragingPage(true, tmp);
    }

    private static void parameterAveragingPage(boolean graph, File tmp) throws Exception {
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4).batchSizePerWorker(4)
                .averagingFrequency(2).build();
        SparkTrainingStats stats = fit(graph, tm, new Sgd(0.1), 12, 91, 3);
        // 12 objects, 2 workers x 2 objects: 3 splits, 6 worker tasks
        assertEquals(6, stats.getWorkerStats().size());
        assertTrue(stats.getWorkerStats().stream().allMatch(w -> w.startTimeMillis() > 0 && w.minibatches() == 2));
        File page = new File(tmp, (graph ? "graph-" : "") + "paramavg.html");
        StatsUtils.exportStatsAsHtml(stats, page.getAbsolutePath(), sc());
        String html = Files.readString(page.toPath());
        assertFalse(html.contains("<script src") || html.contains("<link"), "the page must not load anything");
        assertTrue(html.contains("Chart.js v4.6.1"));

        Map<String, int[]> charts = render(page, tmp);
        assertEquals(4, charts.get("timeline")[0], "four phases");
        assertEquals(4 * 6, charts.get("timeline")[1], "one bar per phase and worker task");
        for (String phase : List.of("restore", "data", "fit", "result")) {
            assertEquals(10, charts.get("hist-" + phase)[1], phase + " histogram bins drawn");
        }
        assertEquals(3, charts.get("splits")[1], "one point per split");
    }

    @Test
    void gradientSharingPageDrawsThresholdSparsityAndBytesPerStep(@TempDir File tmp) throws Exception {
        gradientSharingPage(false, tmp);
    }

    @Test
    void gradientSharingPageOfAGraphFit(@TempDir File tmp) throws Exception {
        gradientSharingPage(true, tmp);
    }

    private static void gradientSharingPage(boolean graph, File tmp) throws Exception {
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(4).batchSizePerWorker(4).rngSeed(1).build();
        SparkTrainingStats stats = fit(graph, tm, new Nesterovs(0.05, 0.9), 16, 92, 2);
        assertFalse(stats.getSharingWorkerStats().isEmpty());
        int steps = stats.getSharingWorkerStats().stream()
                .mapToInt(w -> w.replicaSteps().stream().mapToInt(List::size).sum()).sum();
        int replicas = stats.getSharingWorkerStats().stream().mapToInt(w -> w.replicaSteps().size()).sum();
        assertEquals(16, steps, "one encoding step per minibatch of 4");
        File page = new File(tmp, (graph ? "graph-" : "") + "shared.html");
        try (var out = Files.newOutputStream(page.toPath())) {
            StatsUtils.exportStatsAsHTML(stats, out);
        }
        Map<String, int[]> charts = render(page, tmp);
        assertEquals(stats.getSharingWorkerStats().size(), charts.get("sharing-workers")[1]);
        for (String key : List.of("threshold", "sparsity", "bytes")) {
            assertEquals(replicas, charts.get("sharing-" + key)[0], key + ": one line per replica");
            assertEquals(steps, charts.get("sharing-" + key)[1], key + ": one point per step");
        }
    }

    @Test
    void missingStatsAreRefused() {
        assertThrows(NullPointerException.class, () -> StatsUtils.exportStatsAsHTML(null, System.out));
        Map<String, Object> h = StatsUtils.histogram("fit", new long[] {0, 5, 9, 9});
        assertEquals(List.of(1L, 0L, 0L, 0L, 0L, 1L, 0L, 0L, 0L, 2L),
                java.util.Arrays.stream((long[]) h.get("counts")).boxed().toList());
    }
}
