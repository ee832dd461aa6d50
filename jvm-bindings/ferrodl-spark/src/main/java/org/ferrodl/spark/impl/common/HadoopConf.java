package org.ferrodl.spark.impl.common;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
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

    /**
     * Configurations already read in this JVM, by their serialized form: every task of every fit
     * carries the same driver configuration (Spark's is ~160 KiB serialized), and parsing it took
     * 6-46 ms per task on a loaded one-core executor; a task whose bytes were seen copies that one.
     */
    private static final Map<Key, Configuration> READ = new LinkedHashMap<>(8, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Configuration> eldest) {
            return size() > 4;
        }
    };

    private record Key(byte[] bytes, int hash) {
        Key(byte[] bytes) {
            this(bytes, Arrays.hashCode(bytes));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream data = new DataOutputStream(bytes)) {
            conf.write(data);
        }
        out.writeInt(bytes.size());
        bytes.writeTo(out);
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        int length = in.readInt();
        if (length < 0) {
            throw new IOException("a serialized Hadoop configuration of " + length + " bytes");
        }
        byte[] bytes = in.readNBytes(length);
        if (bytes.length != length) {
            throw new IOException("a serialized Hadoop configuration cut short: " + bytes.length + " of "
                    + length + " bytes");
        }
        Key key = new Key(bytes);
        Configuration seen;
        synchronized (READ) {
            seen = READ.get(key);
        }
        if (seen == null) {
            seen = new Configuration(false);
            seen.readFields(new DataInputStream(new ByteArrayInputStream(bytes)));
            synchronized (READ) {
                READ.put(key, seen);
            }
        }
        // a copy: a loader may change its configuration without changing another task's
        conf = new Configuration(seen);
    }
}
