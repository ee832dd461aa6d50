package org.ferrodl.spark.stats;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.SparkTrainingStats.EncodingStep;
import org.ferrodl.spark.api.SparkTrainingStats.SharingWorkerStats;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;

/**
 * Exports {@link SparkTrainingStats} as one self-contained HTML page: the charting library
 * (Chart.js 4.6.1, MIT licence, embedded from this jar) and the data are inside the file, so it
 * opens without a network. Parameter averaging: a per-executor timeline of the worker phases,
 * histograms of each phase's durations and the split durations. Gradient sharing: per worker task
 * fit times, and per replica the encoding threshold, the fraction of entries sent and the message
 * bytes at every step. A {@code <pre id="ferrodl-chart-summary">} lists each chart with the number
 * of points it drew.
 */
public final class StatsUtils {
    private static final String RESOURCE_DIR = "/org/ferrodl/spark/stats/";
    private static final int HISTOGRAM_BINS = 10;

    private StatsUtils() {
    }

    /**
     * Writes the page to {@code path} through Hadoop's FileSystem (local paths, {@code hdfs://}, ...),
     * replacing an existing file.
     */
    public static void exportStatsAsHtml(SparkTrainingStats stats, String path, JavaSparkContext sc)
            throws IOException {
        Objects.requireNonNull(path, "path");
        Path p = new Path(path);
        FileSystem fs = p.getFileSystem(sc.hadoopConfiguration());
        try (OutputStream out = fs.create(p, true)) {
            exportStatsAsHTML(stats, out);
        }
    }

    /** Writes the page to {@code outputStream} (left open). */
    public static void exportStatsAsHTML(SparkTrainingStats stats, OutputStream outputStream) throws IOException {
        Objects.requireNonNull(stats, "stats (collect them with setCollectTrainingStats(true) before fitting)");
        String page = resource("stats-page.html")
                .replace("/*FERRODL_CHARTJS*/", resource("chart.umd.min.js").replace("</script", "<\\/script"))
                .replace("/*FERRODL_DATA*/", toJson(pageData(stats)).replace("</", "<\\/"));
        outputStream.write(page.getBytes(StandardCharsets.UTF_8));
        outputStream.flush();
    }

    private static String resource(String name) {
        try (InputStream in = StatsUtils.class.getResourceAsStream(RESOURCE_DIR + name)) {
            if (in == null) {
                throw new IllegalStateException("resource " + RESOURCE_DIR + name + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String toJson(Object o) {
        try {
            return new ObjectMapper().writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the statistics as JSON", e);
        }
    }

    /** The data the page draws (package-private for tests). */
    static Map<String, Object> pageData(SparkTrainingStats stats) {
        Map<String, Object> d = new LinkedHashMap<>();
        List<List<Object>> summary = new ArrayList<>();
        summary.add(List.of("executors", String.join(", ", stats.getExecutorIds())));
        stats.getNativeBytesPeakByExecutor().forEach((executor, peak) -> summary.add(List.of(
                "native memory peak, executor " + executor, String.format(java.util.Locale.ROOT, "%,d bytes", peak))));
        d.put("summary", summary);
        List<WorkerStats> workers = stats.getWorkerStats();
        if (!workers.isEmpty()) {
            summary.add(List.of("parameter-averaging worker tasks", String.valueOf(workers.size())));
            summary.add(List.of("splits", String.valueOf(stats.getSplitMillis().size())));
            summary.add(List.of("examples", String.valueOf(workers.stream().mapToLong(WorkerStats::examples).sum())));
            d.put("timeline", timeline(workers));
            List<Object> hist = new ArrayList<>();
            hist.add(histogram("restore", workers.stream().mapToLong(WorkerStats::restoreMillis).toArray()));
            hist.add(histogram("data", workers.stream().mapToLong(WorkerStats::dataMillis).toArray()));
            hist.add(histogram("fit", workers.stream().mapToLong(WorkerStats::fitMillis).toArray()));
            hist.add(histogram("result", workers.stream().mapToLong(WorkerStats::resultMillis).toArray()));
            d.put("histograms", hist);
            d.put("splits", stats.getSplitMillis());
        }
        List<SharingWorkerStats> sharing = stats.getSharingWorkerStats();
        if (!sharing.isEmpty()) {
            summary.add(List.of("gradient-sharing worker tasks", String.valueOf(sharing.size())));
            summary.add(List.of("mean bytes per worker iteration",
                    String.format(java.util.Locale.ROOT, "%.1f", stats.getMeanBytesPerWorkerIteration())));
            summary.add(List.of("parameters (dense fp32 update bytes)",
                    stats.getParameterCount() + " (" + 4 * stats.getParameterCount() + ")"));
            d.put("sharing", sharingData(sharing));
        }
        return d;
    }

    private static Map<String, Object> timeline(List<WorkerStats> workers) {
        long t0 = workers.stream().mapToLong(WorkerStats::startTimeMillis).min().orElse(0);
        TreeMap<String, Boolean> lanes = new TreeMap<>();
        String[] names = {"restore", "data", "fit", "result"};
        List<List<Map<String, Object>>> bars = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            bars.add(new ArrayList<>());
        }
        for (WorkerStats w : workers) {
            String lane = "executor " + w.executorId() + " / partition " + w.partition();
            lanes.put(lane, true);
            long at = w.startTimeMillis() - t0;
            long[] durations = {w.restoreMillis(), w.dataMillis(), w.fitMillis(), w.resultMillis()};
            for (int i = 0; i < names.length; i++) {
                Map<String, Object> bar = new LinkedHashMap<>();
                bar.put("x", List.of(at, at + Math.max(durations[i], 0)));
                bar.put("y", lane);
                bars.get(i).add(bar);
                at += durations[i];
            }
        }
        List<Object> phases = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            phases.add(Map.of("name", names[i], "bars", bars.get(i)));
        }
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("lanes", new ArrayList<>(lanes.keySet()));
        t.put("phases", phases);
        return t;
    }

    /** {@value #HISTOGRAM_BINS} equal bins from 0 to the largest value (at least 1 ms wide in all). */
    static Map<String, Object> histogram(String phase, long[] values) {
        long max = 1;
        for (long v : values) {
            max = Math.max(max, v);
        }
        long[] counts = new long[HISTOGRAM_BINS];
        for (long v : values) {
            counts[(int) Math.min(HISTOGRAM_BINS - 1, v * HISTOGRAM_BINS / (max + 1))]++;
        }
        List<String> labels = new ArrayList<>();
        double width = (max + 1) / (double) HISTOGRAM_BINS;
        String format = width < 10 ? "%.1f–%.1f" : "%.0f–%.0f";
        for (int b = 0; b < HISTOGRAM_BINS; b++) {
            labels.add(String.format(java.util.Locale.ROOT, format, b * width, (b + 1) * width));
        }
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("phase", phase);
        h.put("labels", labels);
        h.put("counts", counts);
        return h;
    }

    private static Map<String, Object> sharingData(List<SharingWorkerStats> sharing) {
        List<String> tasks = new ArrayList<>();
        List<Long> fit = new ArrayList<>();
        List<Object> replicas = new ArrayList<>();
        for (SharingWorkerStats w : sharing) {
            String task = "executor " + w.executorId() + " / partition " + w.partition() + " / attempt " + w.attempt();
            tasks.add(task);
            fit.add(w.fitMillis());
            List<List<EncodingStep>> steps = w.replicaSteps() == null ? List.of() : w.replicaSteps();
            for (int r = 0; r < steps.size(); r++) {
                List<Map<String, Object>> threshold = new ArrayList<>();
                List<Map<String, Object>> sparsity = new ArrayList<>();
                List<Map<String, Object>> bytes = new ArrayList<>();
                for (EncodingStep s : steps.get(r)) {
                    threshold.add(Map.of("x", s.iteration(), "y", s.threshold()));
                    sparsity.add(Map.of("x", s.iteration(), "y", s.sparsity()));
                    bytes.add(Map.of("x", s.iteration(), "y", s.bytes()));
                }
                Map<String, Object> rep = new LinkedHashMap<>();
                rep.put("name", "partition " + w.partition() + " attempt " + w.attempt() + " replica " + r);
                rep.put("threshold", threshold);
                rep.put("sparsity", sparsity);
                rep.put("bytes", bytes);
                replicas.add(rep);
            }
        }
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("tasks", tasks);
        s.put("fitMillis", fit);
        s.put("replicas", replicas);
        return s;
    }
}
