package org.ferrodl.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdxReaderTest {

    private static byte[] idx(int magic, int[] dims, byte[] body) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(magic);
        for (int d : dims) {
            out.writeInt(d);
        }
        out.write(body);
        out.flush();
        return bytes.toByteArray();
    }

    private static byte[] gzip(byte[] raw) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            gz.write(raw);
        }
        return bytes.toByteArray();
    }

    private static InputStream in(byte[] b) {
        return new ByteArrayInputStream(b);
    }

    @Test
    void readsImagesAndLabels() throws IOException {
        byte[] px = {0, 1, 2, 3, 4, 5, (byte) 255, 7};
        IdxReader.Images images = IdxReader.readImages(
                IdxReader.gunzip(in(gzip(idx(2051, new int[] {2, 2, 2}, px))), "x"), "x");
        assertEquals(2, images.count);
        assertEquals(4, images.pixelsPerImage());
        assertArrayEquals(px, images.pixels);
        int[] labels = IdxReader.readLabels(in(idx(2049, new int[] {3}, new byte[] {9, 0, 4})), "y", 10);
        assertArrayEquals(new int[] {9, 0, 4}, labels);
    }

    @Test
    void rejectsWrongMagic() {
        IdxFormatException e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readImages(in(idx(2049, new int[] {1}, new byte[] {1})), "labels.idx"));
        assertTrue(e.getMessage().contains("labels.idx") && e.getMessage().contains("2051"), e.getMessage());
        e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readLabels(in(idx(1234, new int[] {1}, new byte[] {1})), "f", 10));
        assertTrue(e.getMessage().contains("1234") && e.getMessage().contains("2049"), e.getMessage());
    }

    @Test
    void rejectsTruncatedAndOversizedFiles() {
        IdxFormatException e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readImages(in(idx(2051, new int[] {2, 2, 2}, new byte[5])), "short"));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readImages(in(new byte[] {0, 0, 8, 3, 0, 0}), "hdr"));
        assertTrue(e.getMessage().contains("truncated IDX header"), e.getMessage());
        e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readLabels(in(idx(2049, new int[] {2}, new byte[3])), "long", 10));
        assertTrue(e.getMessage().contains("unexpected bytes"), e.getMessage());
        e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readImages(in(idx(2051, new int[] {-1, 28, 28}, new byte[0])), "neg"));
        assertTrue(e.getMessage().contains("count=-1"), e.getMessage());
        e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readImages(in(idx(2051, new int[] {1 << 20, 1 << 10, 1 << 10}, new byte[0])), "big"));
        assertTrue(e.getMessage().contains("too many"), e.getMessage());
    }

    @Test
    void rejectsLabelsOutOfRange() {
        IdxFormatException e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readLabels(in(idx(2049, new int[] {2}, new byte[] {3, 10})), "lab", 10));
        assertTrue(e.getMessage().contains("label 10 at index 1"), e.getMessage());
    }

    @Test
    void rejectsNonGzipAndCorruptGzip() throws IOException {
        IdxFormatException e = assertThrows(IdxFormatException.class,
                () -> IdxReader.gunzip(in(idx(2051, new int[] {1, 1, 1}, new byte[1])), "plain.gz"));
        assertTrue(e.getMessage().contains("not a gzip file"), e.getMessage());
        byte[] gz = gzip(idx(2051, new int[] {4, 28, 28}, new byte[4 * 784]));
        byte[] cut = Arrays.copyOf(gz, gz.length / 2);
        e = assertThrows(IdxFormatException.class,
                () -> IdxReader.readImages(IdxReader.gunzip(in(cut), "cut.gz"), "cut.gz"));
        assertTrue(e.getMessage().startsWith("cut.gz: "), e.getMessage());
    }

    @Test
    void embeddedDataIsTheExpectedMnistSubset() throws IOException {
        MnistData train = MnistData.load(null, "train");
        MnistData test = MnistData.load(null, "test");
        assertEquals(7996, train.count);
        assertEquals(2004, test.count);
        int[] perClass = new int[10];
        for (int i = 0; i < test.count; i++) {
            perClass[test.label(i)]++;
        }
        for (int c : perClass) {
            assertTrue(c > 150 && c < 250, Arrays.toString(perClass));
        }
    }

    @Test
    void dataDirErrorsNameTheFile(@TempDir Path dir) throws IOException {
        IOException e = assertThrows(IOException.class, () -> MnistData.load(dir, "train"));
        assertTrue(e.getMessage().contains("train-images-idx3-ubyte"), e.getMessage());
        // images 2x2 instead of 28x28
        Files.write(dir.resolve("train-images-idx3-ubyte.gz"), gzip(idx(2051, new int[] {1, 2, 2}, new byte[4])));
        Files.write(dir.resolve("train-labels-idx1-ubyte"), idx(2049, new int[] {1}, new byte[] {1}));
        e = assertThrows(IdxFormatException.class, () -> MnistData.load(dir, "train"));
        assertTrue(e.getMessage().contains("2x2"), e.getMessage());
        // count mismatch between images and labels
        Files.write(dir.resolve("train-images-idx3-ubyte.gz"),
                gzip(idx(2051, new int[] {2, 28, 28}, new byte[2 * 784])));
        e = assertThrows(IdxFormatException.class, () -> MnistData.load(dir, "train"));
        assertTrue(e.getMessage().contains("2 images but 1 labels"), e.getMessage());
    }
}
