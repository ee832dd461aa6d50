package org.ferrodl.core.loader.impl;

import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.ferrodl.core.loader.MultiDataSetLoader;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.linalg.dataset.MultiDataSet;

/**
 * Reads files written by {@link MultiDataSet#save} through Hadoop's FileSystem; like
 * {@link SerializedDataSetLoader}, every failure names the path.
 */
public class SerializedMultiDataSetLoader implements MultiDataSetLoader {
    private static final long serialVersionUID = 1L;

    @Override
    public MultiDataSet load(String path, Configuration conf) throws IOException {
        Path file = new Path(path);
        try (InputStream in = file.getFileSystem(conf).open(file)) {
            MultiDataSet mds = new MultiDataSet();
            mds.load(in);
            return mds;
        } catch (DataSetFormatException e) {
            throw new DataSetFormatException(path + " is not a valid MultiDataSet file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IOException("cannot read MultiDataSet file " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SerializedMultiDataSetLoader;
    }

    @Override
    public int hashCode() {
        return SerializedMultiDataSetLoader.class.hashCode();
    }
}
