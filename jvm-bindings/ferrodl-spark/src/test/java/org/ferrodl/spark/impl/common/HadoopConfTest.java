package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** {@link HadoopConf} carries the driver's configuration; each JVM parses a given one once. */
class HadoopConfTest {

    private static byte[] write(HadoopConf c) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(c);
        }
        return bytes.toByteArray();
    }

    private static HadoopConf read(byte[] bytes) throws Exception {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
            return (HadoopConf) in.readObject();
        }
    }

    @Test
    void aConfigurationArrivesWithItsValuesAndEachTaskGetsItsOwnCopy() throws Exception {
        Configuration driver = new Configuration(false);
        driver.set("fs.defaultFS", "hdfs://namenode:8020");
        driver.set("ferrodl.test.key", "one");
        byte[] bytes = write(new HadoopConf(driver));

        HadoopConf first = read(bytes);
        HadoopConf second = read(bytes);
        assertEquals("hdfs://namenode:8020", first.get().get("fs.defaultFS"));
        assertEquals("one", second.get().get("ferrodl.test.key"));
        assertNotSame(first.get(), second.get());
        first.get().set("ferrodl.test.key", "changed by one task");
        assertEquals("one", second.get().get("ferrodl.test.key"), "a task's change stays in its copy");
        assertEquals("one", read(bytes).get().get("ferrodl.test.key"));

        driver.set("ferrodl.test.key", "two");
        driver.unset("fs.defaultFS");
        HadoopConf changed = read(write(new HadoopConf(driver)));
        assertEquals("two", changed.get().get("ferrodl.test.key"), "another configuration is read as itself");
        assertNull(changed.get().get("fs.defaultFS"));
    }

    @Test
    void aTruncatedConfigurationIsAClearError() throws Exception {
        Configuration driver = new Configuration(false);
        driver.set("ferrodl.test.key", "x".repeat(5000));
        byte[] bytes = write(new HadoopConf(driver));
        byte[] cut = Arrays.copyOf(bytes, bytes.length - 2000);
        // an I/O error, never a configuration silently missing its values
        assertThrows(IOException.class, () -> read(cut));
    }
}
