package org.ferrodl.spark.impl.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.core.loader.MultiDataSetLoader;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;

/** Turning directories and paths into DataSets or MultiDataSets on executors. */
public final class LoadFunctions {
    private LoadFunctions() {
    }

    /** Loads each path with {@code loader}, using the driver's Hadoop configuration. */
    public static Function<String, DataSet> loading(DataSetLoader loader, HadoopConf conf) {
        return path -> {
            try {
                return loader.load(path, conf.get());
            } catch (IOException e) {
                throw new UncheckedIOException(e.getMessage(), e);
            }
        };
    }

    /** Loads each path with {@code loader}, using the driver's Hadoop configuration. */
    public static Function<String, MultiDataSet> loadingMulti(MultiDataSetLoader loader, HadoopConf conf) {
        return path -> {
            try {
                return loader.load(path, conf.get());
            } catch (IOException e) {
                throw new UncheckedIOException(e.getMessage(), e);
            }
        };
    }

    /**
     * What a graph trains on from paths: {@code mdsLoader}'s MultiDataSets, or, when it is null,
     * {@code dsLoader}'s DataSets as one-array MultiDataSets.
     */
    public static Function<String, MultiDataSet> graphLoading(DataSetLoader dsLoader, MultiDataSetLoader mdsLoader,
                                                              HadoopConf conf) {
        if (mdsLoader != null) {
            return loadingMulti(mdsLoader, conf);
        }
        if (dsLoader == null) {
            throw new IllegalArgumentException("no loader given: pass a DataSetLoader or a MultiDataSetLoader");
        }
        Function<String, DataSet> ds = loading(dsLoader, conf);
        return path -> MultiDataSet.fromDataSet(ds.call(path));
    }

    /**
     * Checks that exactly one of a {@code TrainingMaster.executeTrainingPaths} call's network and
     * graph is given.
     */
    public static void requireOneNetwork(Object network, Object graph) {
        if ((network == null) == (graph == null)) {
            throw new IllegalArgumentException("give exactly one of network and graph, got "
                    + (network == null ? "neither" : "both"));
        }
    }

    /** {@code paths} loaded lazily with {@code loader}. */
    public static JavaRDD<DataSet> load(JavaSparkContext sc, JavaRDD<String> paths, DataSetLoader loader) {
        return paths.map(loading(loader, HadoopConf.of(sc)));
    }

    /** {@code paths} loaded lazily with {@code loader}. */
    public static JavaRDD<MultiDataSet> loadMulti(JavaSparkContext sc, JavaRDD<String> paths,
                                                  MultiDataSetLoader loader) {
        return paths.map(loadingMulti(loader, HadoopConf.of(sc)));
    }

    /**
     * The files directly inside {@code directory} (not recursive; names starting with {@code _} or
     * {@code .}, such as {@code _SUCCESS}, are skipped), sorted by name.
     *
     * @throws DL4JInvalidInputException when the directory does not exist or holds no file
     */
    public static List<String> listFiles(JavaSparkContext sc, String directory) {
        Path dir = new Path(directory);
        try {
            FileSystem fs = dir.getFileSystem(sc.hadoopConfiguration());
            if (!fs.exists(dir)) {
                throw new DL4JInvalidInputException("data directory " + directory + " does not exist");
            }
            List<String> files = new ArrayList<>();
            for (FileStatus s : fs.listStatus(dir)) {
                String name = s.getPath().getName();
                if (s.isFile() && !name.startsWith("_") && !name.startsWith(".")) {
                    files.add(s.getPath().toString());
                }
            }
            if (files.isEmpty()) {
                throw new DL4JInvalidInputException("data directory " + directory + " holds no files");
            }
            files.sort(null);
            return files;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list data directory " + directory + ": " + e.getMessage(), e);
        }
    }
}
