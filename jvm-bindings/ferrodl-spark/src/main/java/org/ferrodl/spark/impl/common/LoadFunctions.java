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
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;

/** Turning directories and paths into DataSets on executors. */
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

    /** {@code paths} loaded lazily with {@code loader}. */
    public static JavaRDD<DataSet> load(JavaSparkContext sc, JavaRDD<String> paths, DataSetLoader loader) {
        return paths.map(loading(loader, HadoopConf.of(sc)));
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
