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
        int files = 0;
        try (Stream<Path> all = Files.list(dir)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                // the data files and Hadoop's checksum files alike
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f.toString());
                files++;
            }
        }
        assertTrue(files >= 6, "files " + files);
        assertTrue(DataSetExport.delete(sc, base.toString(), "fit-perm").isEmpty());
        assertTrue(Files.notExists(dir));
    }
}
