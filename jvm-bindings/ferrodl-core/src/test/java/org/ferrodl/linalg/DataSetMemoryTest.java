package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.exception.NativeMemoryException;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loading a DataSet file never allocates what its header merely claims, and the native copies a
 * load makes are checked against the native memory budget: refusals name the file and the bytes.
 */
class DataSetMemoryTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @AfterEach
    void restoreBudget() {
        NativeInfo.setNativeMemoryBudget(0);
    }

    private static long inUse() throws Exception {
        return JSON.readTree(NativeInfo.nativeMemory()).get("inUse").asLong();
    }

    /** A forged header claiming 2^40 × 1 feature values: refused from the bytes that are there. */
    @Test
    void aForgedHeaderClaiming2To40ValuesIsRefusedNamingTheFileAndBytes() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.put("FRDLDSET".getBytes(StandardCharsets.US_ASCII)).putInt(1).putInt(0);
        b.putInt(2).putLong(1L << 40).putLong(1).putFloat(1f).putFloat(2f);
        File f = dir.resolve("forged.bin").toFile();
        Files.write(f.toPath(), java.util.Arrays.copyOf(b.array(), b.position()));
        long before = inUse();
        DataSetFormatException e = assertThrows(DataSetFormatException.class, () -> new DataSet().load(f));
        assertTrue(e.getMessage().startsWith(f + ": truncated: expected 4398046511104 bytes of features, found 8"),
                e.getMessage());
        assertTrue(inUse() < before + (1 << 20), "nothing the header claims was allocated");
    }

    /**
     * A real 4 MB file under a budget 2 MiB over what is in use: the native copy of its bytes is
     * refused (naming the file and the exact bytes); the same load passes under a larger budget.
     */
    @Test
    void aFileLargerThanTheBudgetIsRefusedNamingTheFileThenLoads() throws Exception {
        int n = 1_000_000;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i % 101;
        }
        DataSet d = new DataSet(Nd4j.create(x, n, 1), Nd4j.ones(n, 1));
        File f = dir.resolve("big.bin").toFile();
        d.save(f);
        long size = Files.size(f.toPath());
        NativeInfo.setNativeMemoryBudget(inUse() + (2L << 20));
        NativeMemoryException e = assertThrows(NativeMemoryException.class, () -> new DataSet().load(f));
        assertTrue(e.getMessage().startsWith(f + ": the native copy of the DataSet bytes needs "
                + String.format(Locale.ROOT, "%,d", size) + " bytes of native memory, but the native memory budget is"),
                e.getMessage());
        NativeInfo.setNativeMemoryBudget(inUse() + (64L << 20));
        DataSet back = new DataSet();
        back.load(f);
        assertEquals(d, back);

        // MultiDataSet files go through the same checks.
        MultiDataSet m = new MultiDataSet(d.getFeatures(), d.getLabels());
        File mf = dir.resolve("big-multi.bin").toFile();
        m.save(mf);
        NativeInfo.setNativeMemoryBudget(inUse() + (2L << 20));
        NativeMemoryException me = assertThrows(NativeMemoryException.class, () -> new MultiDataSet().load(mf));
        assertTrue(me.getMessage().startsWith(mf + ": the native copy of the MultiDataSet bytes needs "),
                me.getMessage());
    }
}
