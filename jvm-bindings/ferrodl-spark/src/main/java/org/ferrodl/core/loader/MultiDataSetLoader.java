package org.ferrodl.core.loader;

import java.io.IOException;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;
import org.ferrodl.linalg.dataset.MultiDataSet;

/** Reads one {@link MultiDataSet} from a path; see {@link DataSetLoader}. */
@FunctionalInterface
public interface MultiDataSetLoader extends Serializable {

    /**
     * @param path a Hadoop FileSystem URI or local path
     * @param conf the Hadoop configuration of the driver's Spark context
     * @return the MultiDataSet stored at {@code path}
     * @throws IOException when it cannot be read
     */
    MultiDataSet load(String path, Configuration conf) throws IOException;
}
