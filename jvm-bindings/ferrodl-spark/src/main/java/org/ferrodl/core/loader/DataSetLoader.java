package org.ferrodl.core.loader;

import java.io.IOException;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;
import org.ferrodl.linalg.dataset.DataSet;

/**
 * Reads one {@link DataSet} from a path: used by {@code fit(String)}, {@code fitPaths},
 * {@code evaluate(String, DataSetLoader)} and the Export training approach. Implementations are
 * serializable (they run on executors) and should name the path in any exception.
 */
@FunctionalInterface
public interface DataSetLoader extends Serializable {

    /**
     * @param path a Hadoop FileSystem URI or local path ({@code hdfs://...}, {@code file:/...}, ...)
     * @param conf the Hadoop configuration of the driver's Spark context
     * @return the DataSet stored at {@code path}
     * @throws IOException when it cannot be read
     */
    DataSet load(String path, Configuration conf) throws IOException;
}
