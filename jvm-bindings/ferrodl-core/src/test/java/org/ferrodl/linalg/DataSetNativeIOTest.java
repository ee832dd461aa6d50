package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** save/load through the native codec; needs the native library. */
class DataSetNativeIOTest {

    @TempDir
    Path dir;

    @Test
    void saveLoadRoundTripWithoutMasks() throws Exception {
        DataSet d = new DataSet(Nd4j.rand(1, new long[] {6, 4}), Nd4j.rand(2, new long[] {6, 3}));
        File f = dir.resolve("plain.bin").toFile();
        d.save(f);
        DataSet back = new DataSet();
        back.load(f);
        assertEquals(d, back);
        assertNull(back.getLabelsMaskArray());
        assertNull(back.getFeaturesMaskArray());
    }

    @Test
    void saveLoadRoundTripWithMasksAndSpecialValues() throws Exception {
        DataSet d = new DataSet(Nd4j.create(new float[] {0f, -0f, Float.MAX_VALUE, Float.MIN_VALUE, -1.5f, 3e-20f},
                3, 2), Nd4j.create(new float[] {1, 0, 0, 1, 1, 0}, 3, 2), Nd4j.ones(3, 2),
                Nd4j.create(new float[] {1, 0, 1}, 3, 1));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        d.save(out);
        DataSet back = new DataSet();
        back.load(new ByteArrayInputStream(out.toByteArray()));
        assertEquals(d, back);
        assertEquals(Nd4j.create(new float[] {1, 0, 1}, 3, 1), back.getLabelsMaskArray());
    }

    @Test
    void truncatedFileIsAFormatError() throws Exception {
        DataSet d = new DataSet(Nd4j.rand(3, new long[] {5, 4}), Nd4j.rand(4, new long[] {5, 2}));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        d.save(out);
        byte[] bytes = out.toByteArray();
        File f = dir.resolve("truncated.bin").toFile();
        Files.write(f.toPath(), Arrays.copyOf(bytes, bytes.length - 7));
        DataSetFormatException e = assertThrows(DataSetFormatException.class, () -> new DataSet().load(f));
        assertTrue(e.getMessage().contains("truncated.bin"), e.getMessage());
        DataSetFormatException half = assertThrows(DataSetFormatException.class,
                () -> new DataSet().load(new ByteArrayInputStream(Arrays.copyOf(bytes, bytes.length / 2))));
        assertTrue(!half.getMessage().isEmpty());
    }

    @Test
    void foreignFileIsAFormatError() throws Exception {
        File f = dir.resolve("notes.txt").toFile();
        Files.write(f.toPath(), "this is not a DataSet, just some text\n".getBytes(StandardCharsets.UTF_8));
        DataSetFormatException e = assertThrows(DataSetFormatException.class, () -> new DataSet().load(f));
        assertTrue(e.getMessage().contains("notes.txt"), e.getMessage());
        assertThrows(DataSetFormatException.class, () -> new DataSet().load(new ByteArrayInputStream(new byte[0])));
    }
}
