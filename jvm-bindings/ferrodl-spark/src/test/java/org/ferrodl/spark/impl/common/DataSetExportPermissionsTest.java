package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMasterTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exported minibatches may be private data: owner-only, whatever the umask. */
class DataSetExportPermissionsTest {
    @Test
    void exportedDirectoryAndFilesAreOwnerOnly(@TempDir Path base) throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        List<DataSet> data = SharedTrainingMasterTest.separable(6, 4, 1);
        List<String> paths = DataSetExport.export(sc, sc.parallelize(data, 2), base.toString(), "fit-perm").collect();
        assertEquals(6, paths.size());
        Path dir = base.resolve("fit-perm");
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        List<String> names = new java.util.ArrayList<>();
        try (Stream<Path> all = Files.list(dir)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f.toString());
                names.add(f.getFileName().toString());
            }
        }
        // one file per DataSet and nothing else: a local export is written with java.nio, not through
        // Hadoop's local file system (which adds a .crc file per file and starts a chmod process each)
        java.util.Collections.sort(names);
        assertEquals(List.of("dataset_0_0.bin", "dataset_0_1.bin", "dataset_0_2.bin", "dataset_1_0.bin",
                "dataset_1_1.bin", "dataset_1_2.bin"), names);
        for (String p : paths) {
            assertTrue(p.endsWith(".bin") && Files.exists(dir.resolve(p.substring(p.lastIndexOf('/') + 1))), p);
        }
        assertTrue(DataSetExport.delete(sc, base.toString(), "fit-perm").isEmpty());
        assertTrue(Files.notExists(dir));
    }

    @Test
    void aWideExistingDirectoryIsNarrowedAndItsFilesReplaced(@TempDir Path base) throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        Path dir = Files.createDirectory(base.resolve("fit-wide"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path stale = Files.writeString(dir.resolve("dataset_0_0.bin"), "stale bytes, longer than nothing");
        Files.setPosixFilePermissions(stale, PosixFilePermissions.fromString("rw-rw-rw-"));
        List<DataSet> data = SharedTrainingMasterTest.separable(2, 4, 2);
        List<String> paths = DataSetExport.export(sc, sc.parallelize(data, 1), base.toString(), "fit-wide").collect();
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(stale)));
        // the stale file was replaced (truncated), not appended to: it loads back as the first DataSet
        List<DataSet> back = new java.util.ArrayList<>();
        DataSetExport.load(paths.iterator(), NetworkKind.MULTI_LAYER).forEachRemaining(back::add);
        assertEquals(2, back.size());
        assertEquals(data, back);
        assertTrue(DataSetExport.delete(sc, base.toString(), "fit-wide").isEmpty());
    }
}
