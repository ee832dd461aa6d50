package org.ferrodl.spark.impl.common;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.dataset.DataSet;

/**
 * The Export training approach: DataSets are written once to {@code <base>/<fitId>/} (one file per
 * DataSet, the documented binary format, through Hadoop's FileSystem so hdfs://, s3a:// and
 * file:// all work), and workers then stream them back from their paths. This keeps the
 * training stage's input small and lets Spark re-run a failed task without recomputing the data.
 *
 * <p>The fit's directory is created owner-only ({@code rwx------}) and every file in it
 * {@code rw-------}: the data may be private and the default base lies under the shared temporary
 * directory. (The permission is set explicitly after creation, so a permissive umask cannot widen
 * it; file systems without POSIX permissions ignore it.) {@link ExportFolder} writes them: local
 * directories through java.nio, every other file system through Hadoop's.
 *
 * <p>A base directory that executors and the driver do not share (a local path on a multi-host
 * cluster) is detected after the export, when the driver cannot see the files the executors wrote,
 * and refused with a message that says what to configure instead.
 */
public final class DataSetExport {
    /** {@code rwx------} for the fit's directory. */
    public static final short DIRECTORY_PERMISSION = 0700;
    /** {@code rw-------} for each exported file. */
    public static final short FILE_PERMISSION = 0600;

    private DataSetExport() {}

    /** The base directory used when none is configured: {@code ${hadoop.tmp.dir}/ferrodl}. */
    public static String defaultBaseDirectory(JavaSparkContext sc) {
        String tmp = sc.hadoopConfiguration().get("hadoop.tmp.dir", System.getProperty("java.io.tmpdir"));
        return new Path(tmp, "ferrodl").toString();
    }

    /**
     * Writes every DataSet of {@code data} under {@code base/fitId} and returns the RDD of their
     * paths: partition {@code p} holds the files of input partition {@code p}, in order.
     */
    public static JavaRDD<String> export(JavaSparkContext sc, JavaRDD<DataSet> data, String base, String fitId) {
        return export(sc, data, base, fitId, NetworkKind.MULTI_LAYER);
    }

    /**
     * Writes every object (DataSet or MultiDataSet, as {@code kind} says) of {@code data} under
     * {@code base/fitId} and returns the RDD of their paths: partition {@code p} holds the files of
     * input partition {@code p}, in order.
     */
    public static <B> JavaRDD<String> export(JavaSparkContext sc, JavaRDD<B> data, String base, String fitId,
                                             NetworkKind<?, B> kind) {
        return exportCounted(sc, data, base, fitId, kind).paths();
    }

    /**
     * An export's paths and the number of files in each partition of {@link #paths}: known on the
     * driver once the export returns, so no Spark job has to count them (the RDD of paths is built
     * from the driver's lists and never changes).
     */
    public record Exported(JavaRDD<String> paths, long[] sizes) {
    }

    /** {@link #export(JavaSparkContext, JavaRDD, String, String, NetworkKind)} with the partition sizes. */
    public static <B> Exported exportCounted(JavaSparkContext sc, JavaRDD<B> data, String base, String fitId,
                                             NetworkKind<?, B> kind) {
        String stem = kind.batchName().toLowerCase(java.util.Locale.ROOT);
        String dir = new Path(base, fitId).toString();
        JavaRDD<List<String>> paths = data.mapPartitionsWithIndex((partition, it) -> {
            List<String> written = new ArrayList<>();
            ExportFolder folder = ExportFolder.open(dir);
            int i = 0;
            while (it.hasNext()) {
                B ds = it.next();
                String name = stem + "_" + partition + "_" + (i++) + ".bin";
                try (OutputStream out = folder.create(name)) {
                    kind.save(ds, out);
                }
                folder.closed(name);
                written.add(folder.pathOf(name));
            }
            return Collections.singletonList(written).iterator();
        }, true);
        List<List<String>> byPartition = paths.collect();
        List<String> all = new ArrayList<>();
        byPartition.forEach(all::addAll);
        checkVisibleFromDriver(sc, dir, all);
        // one list per slice: partition p of the result holds the files of input partition p, in order
        JavaRDD<String> result = sc.parallelize(byPartition, Math.max(1, byPartition.size())).flatMap(List::iterator);
        long[] sizes = byPartition.isEmpty() ? new long[1] : byPartition.stream().mapToLong(List::size).toArray();
        return new Exported(result, sizes);
    }

    private static void checkVisibleFromDriver(JavaSparkContext sc, String dir, List<String> files) {
        if (files.isEmpty()) {
            return;
        }
        try {
            Path first = new Path(files.get(0));
            Path last = new Path(files.get(files.size() - 1));
            FileSystem fs = first.getFileSystem(sc.hadoopConfiguration());
            if (!fs.exists(first) || !fs.exists(last)) {
                throw new DL4JInvalidConfigException("exportDirectory " + dir + " is not shared between the "
                        + "executors and the driver: the driver cannot see " + (fs.exists(first) ? last : first)
                        + " which an executor wrote. On a cluster without a shared filesystem use "
                        + "exportDirectory(\"hdfs://...\") (or another shared filesystem) or "
                        + "rddTrainingApproach(RDDTrainingApproach.Direct)");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot check the exported data in " + dir, e);
        }
    }

    /** Streams the objects stored at {@code paths}, loading one file at a time. */
    public static <B> Iterator<B> load(Iterator<String> paths, NetworkKind<?, B> kind) {
        Function<String, B> loader = kind.storedLoader(new HadoopConf(new Configuration()));
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return paths.hasNext();
            }

            @Override
            public B next() {
                if (!paths.hasNext()) {
                    throw new NoSuchElementException();
                }
                String file = paths.next();
                try {
                    return loader.call(file);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("cannot read exported " + kind.batchName() + " " + file, e);
                }
            }
        };
    }

    /** Deletes {@code base/fitId} and everything in it; failures are returned, not thrown. */
    public static List<String> delete(JavaSparkContext sc, String base, String fitId) {
        Path dir = new Path(base, fitId);
        try {
            dir.getFileSystem(sc.hadoopConfiguration()).delete(dir, true);
            return Collections.emptyList();
        } catch (IOException e) {
            return List.of("could not delete " + dir + ": " + e.getMessage());
        }
    }
}
