package org.ferrodl.util;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model archive through {@link ModelSerializer}: a file written before the code moved out of
 * MultiLayerNetwork (src/test/resources, a 4-3-2 tanh/softmax network after 3 Adam iterations)
 * loads bit for bit and is written back with identical entries; streams; wrong model types.
 */
class ModelSerializerTest {

    @TempDir
    Path dir;

    private File fixture() throws IOException {
        File f = dir.resolve("fixture.zip").toFile();
        try (InputStream in = getClass().getResourceAsStream("mln-format1-dense-4-3-2.zip")) {
            Files.copy(in, f.toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        return f;
    }

    private static byte[] entry(File zip, String name) throws IOException {
        try (ZipFile z = new ZipFile(zip)) {
            ZipEntry e = z.getEntry(name);
            return e == null ? null : z.getInputStream(e).readAllBytes();
        }
    }

    /** The floats of a vector entry, read independently of ModelSerializer. */
    private static float[] vector(byte[] bytes) throws IOException {
        DataInputStream d = new DataInputStream(new ByteArrayInputStream(bytes));
        assertEquals(0x46444C56, d.readInt());
        float[] v = new float[(int) d.readLong()];
        for (int i = 0; i < v.length; i++) {
            v[i] = d.readFloat();
        }
        return v;
    }

    private static void assertBits(float[] want, float[] got) {
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++) {
            assertEquals(Float.floatToRawIntBits(want[i]), Float.floatToRawIntBits(got[i]), "value " + i);
        }
    }

    @Test
    void aFileWrittenBeforeTheSplitLoadsBitForBitAndIsWrittenBackIdentically() throws Exception {
        File f = fixture();
        float[] params = vector(entry(f, "coefficients.bin"));
        float[] upd = vector(entry(f, "updaterState.bin"));
        assertEquals(23, params.length);
        try (MultiLayerNetwork net = ModelSerializer.restoreMultiLayerNetwork(f);
             MultiLayerNetwork viaLoad = MultiLayerNetwork.load(f)) {
            assertBits(params, NDArray.internalData(net.params()));
            assertBits(upd, NDArray.internalData(net.getUpdaterState()));
            assertEquals(3, net.getIterationCount());
            assertEquals(net.params(), viaLoad.params());
            // Output recorded when the fixture was made: [0.5584, 0.4416] (printed to 4 places).
            float[] out = NDArray.internalData(net.output(Nd4j.create(new float[] {0.1f, 0.2f, 0.3f, 0.4f}, 1, 4)));
            assertEquals(0.5584, out[0], 5e-5);
            assertEquals(0.4416, out[1], 5e-5);

            File again = dir.resolve("again.zip").toFile();
            ModelSerializer.writeModel(net, again, true);
            for (String name : new String[] {"configuration.json", "coefficients.bin", "updaterState.bin"}) {
                assertArrayEquals(entry(f, name), entry(again, name), name);
            }
            Properties before = new Properties();
            before.load(new ByteArrayInputStream(entry(f, "ferrodl-model.properties")));
            Properties after = new Properties();
            after.load(new ByteArrayInputStream(entry(again, "ferrodl-model.properties")));
            assertEquals(before, after);
            try (ZipFile z = new ZipFile(again)) {
                assertEquals("[ferrodl-model.properties, configuration.json, coefficients.bin, updaterState.bin]",
                        z.stream().map(ZipEntry::getName).toList().toString());
            }
        }
    }

    @Test
    void streamRoundTripAndNoUpdater() throws Exception {
        try (MultiLayerNetwork net = ModelSerializer.restoreMultiLayerNetwork(fixture())) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ModelSerializer.writeModel(net, out, false);
            try (MultiLayerNetwork back = ModelSerializer.restoreMultiLayerNetwork(
                    new ByteArrayInputStream(out.toByteArray()))) {
                assertEquals(net.params(), back.params());
                assertEquals(0.0, back.getUpdaterState().sumNumber().doubleValue());
                assertEquals(3, back.getIterationCount());
            }
            IOException garbage = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(
                    new ByteArrayInputStream(new byte[] {1, 2, 3})));
            assertTrue(garbage.getMessage().startsWith("<stream> is not a ferrodl model file"), garbage.getMessage());
        }
    }

    /** Copies the fixture, replacing one entry (null removes it). */
    private File withEntry(String name, byte[] bytes) throws IOException {
        File src = fixture();
        File out = dir.resolve("edited-" + name).toFile();
        try (ZipFile z = new ZipFile(src);
             ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(out.toPath()))) {
            for (ZipEntry e : z.stream().toList()) {
                byte[] b = e.getName().equals(name) ? bytes : z.getInputStream(e).readAllBytes();
                if (b != null) {
                    zip.putNextEntry(new ZipEntry(e.getName()));
                    zip.write(b);
                    zip.closeEntry();
                }
            }
        }
        return out;
    }

    @Test
    void wrongTypeAndCorruptVectorsAreNamed() throws Exception {
        String props = new String(entry(fixture(), "ferrodl-model.properties"), "ISO-8859-1")
                .replace("modelType=MultiLayerNetwork", "modelType=ComputationGraph");
        File graph = withEntry("ferrodl-model.properties", props.getBytes("ISO-8859-1"));
        IOException type = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(graph));
        assertEquals(graph + " holds a ComputationGraph, not a MultiLayerNetwork (restore it with "
                + "ModelSerializer.restoreComputationGraph)", type.getMessage());

        // Counts that are impossible, or disagree with the entry's size, are refused before allocating.
        byte[] coef = entry(fixture(), "coefficients.bin");
        coef[4] = 0x10;
        File huge = withEntry("coefficients.bin", coef);
        IOException count = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(huge));
        assertEquals(huge + ": entry coefficients.bin declares 1152921504606846999 values but the configuration "
                + "needs 23", count.getMessage());
        byte[] big = entry(fixture(), "coefficients.bin");
        big[9] = 0x10;
        File bigCount = withEntry("coefficients.bin", big);
        IOException size = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(bigCount));
        assertEquals(bigCount + ": entry coefficients.bin declares 1048599 values but the configuration needs 23",
                size.getMessage());
        byte[] shortCoef = java.util.Arrays.copyOf(entry(fixture(), "coefficients.bin"), 50);
        File cut = withEntry("coefficients.bin", shortCoef);
        IOException truncated = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(cut));
        assertEquals(cut + ": entry coefficients.bin declares 23 values (104 bytes) but holds 50 bytes",
                truncated.getMessage());
        File noConf = withEntry("configuration.json", null);
        IOException missing = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(noConf));
        assertTrue(missing.getMessage().contains("missing entry configuration.json"), missing.getMessage());
    }

    /**
     * A model archive whose central directory is forged to agree with a huge declared count (here
     * 2^29 values, 2 GiB of floats, with 12 bytes really stored), so no size check of the archive
     * catches it: the vector is refused from the count the configuration needs before any array is
     * allocated, and a configuration that itself claims a huge network is refused by the engine's
     * native memory budget before any vector is read, naming the file and the bytes.
     */
    @Test
    void aForgedArchiveClaimingHugeParameterCountsIsRefusedBeforeAllocating() throws Exception {
        long declared = 1L << 29;
        String small = new String(entry(fixture(), "configuration.json"), java.nio.charset.StandardCharsets.UTF_8);
        File forged = forgedArchive("forged-count.zip", small, declared);
        IOException count = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(forged));
        assertEquals(forged + ": entry coefficients.bin declares 536870912 values but the configuration needs 23",
                count.getMessage());

        String huge = new org.ferrodl.nn.conf.NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new org.ferrodl.nn.conf.layers.DenseLayer.Builder().nIn(1 << 20).nOut(1 << 20).build())
                .layer(new org.ferrodl.nn.conf.layers.OutputLayer.Builder().nIn(1 << 20).nOut(2).build())
                .build().toJson();
        File hugeNet = forgedArchive("forged-network.zip", huge, declared);
        org.ferrodl.exception.NativeMemoryException mem = assertThrows(
                org.ferrodl.exception.NativeMemoryException.class,
                () -> ModelSerializer.restoreMultiLayerNetwork(hugeNet));
        assertTrue(mem.getMessage().startsWith(hugeNet + ": configuration.json describes a network that does not "
                + "fit the native memory budget: the network's 1,099,514,773,506 parameters"), mem.getMessage());
        assertTrue(mem.getMessage().contains("needs 8,796,118,188,048 bytes of native memory"), mem.getMessage());
    }

    /**
     * A model archive with {@code conf} whose {@code coefficients.bin} declares {@code declared}
     * values but stores only its 12-byte header, with the central directory's uncompressed size
     * rewritten to match the declaration.
     */
    private File forgedArchive(String name, String conf, long declared) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            zip.putNextEntry(new ZipEntry(ModelSerializer.MODEL_PROPERTIES));
            zip.write(("formatVersion=1\nmodelType=MultiLayerNetwork\nnumParams=" + declared + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            zip.putNextEntry(new ZipEntry(ModelSerializer.CONFIGURATION_JSON));
            zip.write(conf.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            zip.putNextEntry(new ZipEntry(ModelSerializer.COEFFICIENTS_BIN));
            java.nio.ByteBuffer header = java.nio.ByteBuffer.allocate(12).putInt(0x46444C56).putLong(declared);
            zip.write(header.array());
            zip.closeEntry();
        }
        byte[] b = bytes.toByteArray();
        java.nio.ByteBuffer le = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        byte[] target = ModelSerializer.COEFFICIENTS_BIN.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        boolean patched = false;
        for (int at = 0; at + 46 <= b.length; at++) {
            if (le.getInt(at) != 0x02014b50) { // central directory file header
                continue;
            }
            int nameLen = le.getShort(at + 28) & 0xFFFF;
            if (java.util.Arrays.equals(java.util.Arrays.copyOfRange(b, at + 46, at + 46 + nameLen), target)) {
                le.putInt(at + 24, (int) (12 + 4 * declared)); // uncompressed size, unsigned
                patched = true;
            }
        }
        assertTrue(patched, "central directory entry of coefficients.bin found");
        File out = dir.resolve(name).toFile();
        Files.write(out.toPath(), b);
        try (ZipFile z = new ZipFile(out)) {
            assertEquals(12 + 4 * declared, z.getEntry(ModelSerializer.COEFFICIENTS_BIN).getSize(), "forged size");
        }
        return out;
    }
}
