package org.ferrodl.spark.impl.common;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * The driver's Hadoop configuration, carried to executors (Configuration itself is not
 * Serializable), so loaders there resolve paths the way the driver does (fs.defaultFS, HDFS
 * client settings, credentials providers).
 */
public final class HadoopConf implements Serializable {
    private static final long serialVersionUID = 1L;

    private transient Configuration conf;

    public HadoopConf(Configuration conf) {
        this.conf = conf;
    }

    public static HadoopConf of(JavaSparkContext sc) {
        return new HadoopConf(sc.hadoopConfiguration());
    }

    public Configuration get() {
        return conf;
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        conf.write(out);
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        conf = new Configuration(false);
        conf.readFields(in);
    }
}
