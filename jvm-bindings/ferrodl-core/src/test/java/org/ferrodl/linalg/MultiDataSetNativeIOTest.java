package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MultiDataSet save/load through the native codec; needs the native library. */
class MultiDataSetNativeIOTest {

    @TempDir
    Path dir;

    private static byte[] bytes(MultiDataSet m) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        m.save(out);
        return out.toByteArray();
    }

    private static void assertBitExact(INDArray[] want, INDArray[] got) {
        if (want == null) {
            assertNull(got);
            return;
        }
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++) {
            if (want[i] == null) {
                assertNull(got[i], "entry " + i);
                continue;
            }
            assertArrayEquals(want[i].shape(), got[i].shape());
            float[] a = NDArray.internalData(want[i]);
            float[] b = NDArray.internalData(got[i]);
            assertEquals(a.length, b.length);
            for (int k = 0; k < a.length; k++) {
                assertEquals(Float.floatToRawIntBits(a[k]), Float.floatToRawIntBits(b[k]), "value " + k);
            }
        }
    }

    private static void assertBitExact(MultiDataSet want, MultiDataSet got) {
        assertBitExact(want.getFeatures(), got.getFeatures());
        assertBitExact(want.getLabels(), got.getLabels());
        assertBitExact(want.getFeaturesMaskArrays(), got.getFeaturesMaskArrays());
        assertBitExact(want.getLabelsMaskArrays(), got.getLabelsMaskArrays());
    }

    @Test
    void roundTripIsBitExactWithMasksNullEntriesAndSpecialValues() throws Exception {
        MultiDataSet m = MultiDataSetTest.sample(6);
        m.getFeatures(0).putScalar(0, 0, -0.0);
        m.getFeatures(0).putScalar(1, 1, Float.NaN);
        m.getLabels(1).putScalar(2, 0, Float.MIN_VALUE);
        m.getLabels(1).putScalar(3, 0, Float.NEGATIVE_INFINITY);
        File f = dir.resolve("two-in-two-out.mds").toFile();
        m.save(f);
        MultiDataSet back = new MultiDataSet();
        back.load(f);
        assertBitExact(m, back);
        assertNull(back.getFeaturesMaskArray(0));
        assertNull(back.getLabelsMaskArray(1));
        // A 4-D (CNN) input and no masks at all: the mask lists stay null, not lists of nulls.
        MultiDataSet cnn = new MultiDataSet(new INDArray[] {Nd4j.rand(3, new long[] {2, 3, 4, 4}), Nd4j.rand(4,
                new long[] {2, 5})}, new INDArray[] {Nd4j.rand(5, new long[] {2, 10})});
        MultiDataSet cnnBack = new MultiDataSet();
        cnnBack.load(new ByteArrayInputStream(bytes(cnn)));
        assertBitExact(cnn, cnnBack);
        assertEquals(cnn, cnnBack);
        // A list of all-null masks survives as such.
        MultiDataSet nullMasks = new MultiDataSet(new INDArray[] {Nd4j.ones(2, 2)}, new INDArray[] {Nd4j.ones(2, 1)},
                new INDArray[] {null}, null);
        MultiDataSet nullBack = new MultiDataSet();
        nullBack.load(new ByteArrayInputStream(bytes(nullMasks)));
        assertArrayEquals(new INDArray[] {null}, nullBack.getFeaturesMaskArrays());
        assertNull(nullBack.getLabelsMaskArrays());
        // Unlabelled and empty MultiDataSets.
        MultiDataSet unlabelled = new MultiDataSet(Nd4j.rand(6, new long[] {3, 2}), null);
        MultiDataSet ub = new MultiDataSet();
        ub.load(new ByteArrayInputStream(bytes(unlabelled)));
        assertEquals(unlabelled, ub);
        MultiDataSet eb = new MultiDataSet(Nd4j.ones(1, 1), Nd4j.ones(1, 1));
        eb.load(new ByteArrayInputStream(bytes(new MultiDataSet())));
        assertEquals(0, eb.numFeatureArrays());
    }

    @Test
    void everyTruncationIsAFormatErrorAndTheFileIsNamed() throws Exception {
        byte[] b = bytes(MultiDataSetTest.sample(3));
        for (int cut = 0; cut < b.length; cut += 7) {
            byte[] part = Arrays.copyOf(b, cut);
            DataSetFormatException e = assertThrows(DataSetFormatException.class,
                    () -> new MultiDataSet().load(new ByteArrayInputStream(part)));
            assertTrue(e.getMessage().startsWith("truncated") || e.getMessage().contains("bad magic"),
                    "cut " + cut + ": " + e.getMessage());
        }
        File f = dir.resolve("cut.mds").toFile();
        Files.write(f.toPath(), Arrays.copyOf(b, b.length - 3));
        DataSetFormatException e = assertThrows(DataSetFormatException.class, () -> new MultiDataSet().load(f));
        assertEquals(f + ": truncated: expected 4 bytes of checksum, found 1", e.getMessage());
    }

    @Test
    void corruptionWrongVersionAndForeignFilesAreNamed() throws Exception {
        byte[] b = bytes(MultiDataSetTest.sample(3));
        byte[] flipped = b.clone();
        flipped[60] ^= 0x10;
        File f = dir.resolve("flipped.mds").toFile();
        Files.write(f.toPath(), flipped);
        DataSetFormatException crc = assertThrows(DataSetFormatException.class, () -> new MultiDataSet().load(f));
        assertTrue(crc.getMessage().startsWith(f + ": checksum mismatch"), crc.getMessage());

        byte[] v2 = b.clone();
        v2[8] = 2;
        DataSetFormatException version = assertThrows(DataSetFormatException.class,
                () -> new MultiDataSet().load(new ByteArrayInputStream(v2)));
        assertEquals("unsupported MultiDataSet format version 2 (this build reads 1)", version.getMessage());

        // A DataSet file handed to MultiDataSet.load, and the other way round.
        ByteArrayOutputStream ds = new ByteArrayOutputStream();
        new DataSet(Nd4j.ones(2, 2), Nd4j.ones(2, 1)).save(ds);
        DataSetFormatException wrongKind = assertThrows(DataSetFormatException.class,
                () -> new MultiDataSet().load(new ByteArrayInputStream(ds.toByteArray())));
        assertTrue(wrongKind.getMessage().contains("this is a DataSet file (DataSet.load reads it)"),
                wrongKind.getMessage());
        DataSetFormatException otherWay = assertThrows(DataSetFormatException.class,
                () -> new DataSet().load(new ByteArrayInputStream(b)));
        assertTrue(otherWay.getMessage().contains("this is a MultiDataSet file"), otherWay.getMessage());

        // A huge declared array count is refused with the number, before anything is allocated.
        byte[] huge = Arrays.copyOf(b, 24);
        huge[16] = (byte) 0xff;
        huge[17] = (byte) 0xff;
        huge[18] = (byte) 0xff;
        huge[19] = (byte) 0x7f;
        DataSetFormatException count = assertThrows(DataSetFormatException.class,
                () -> new MultiDataSet().load(new ByteArrayInputStream(huge)));
        assertTrue(count.getMessage().startsWith("declares 2147483647 features arrays"), count.getMessage());
    }

    @Test
    void saveRefusesInconsistentArrays() {
        MultiDataSet m = MultiDataSetTest.sample(3);
        m.setLabels(1, Nd4j.ones(2, 1));
        assertThrows(org.ferrodl.exception.DL4JInvalidInputException.class, () -> bytes(m));
    }
}
