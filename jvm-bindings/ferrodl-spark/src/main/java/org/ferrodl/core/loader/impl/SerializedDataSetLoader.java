package org.ferrodl.core.loader.impl;

import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.linalg.dataset.DataSet;

/**
 * Reads files written by {@link DataSet#save} (docs/DATASET_FORMAT.md) through Hadoop's
 * FileSystem, so {@code hdfs://}, {@code file:} and any other configured scheme work. A missing,
 * truncated, corrupt or foreign file fails with an exception whose message names the path.
 */
public class SerializedDataSetLoader implements DataSetLoader {
    private static final long serialVersionUID = 1L;

    @Override
    public DataSet load(String path, Configuration conf) throws IOException {
        Path file = new Path(path);
        try (InputStream in = file.getFileSystem(conf).open(file)) {
            DataSet ds = new DataSet();
            ds.load(in);
            return ds;
        } catch (DataSetFormatException e) {
            throw new DataSetFormatException(path + " is not a valid DataSet file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IOException("cannot read DataSet file " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SerializedDataSetLoader;
    }

    @Override
    public int hashCode() {
        return SerializedDataSetLoader.class.hashCode();
    }
}
