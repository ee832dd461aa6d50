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
        assertEquals(huge + ": entry coefficients.bin declares an invalid length 1152921504606846999",
                count.getMessage());
        byte[] big = entry(fixture(), "coefficients.bin");
        big[9] = 0x10;
        File bigCount = withEntry("coefficients.bin", big);
        IOException size = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(bigCount));
        assertEquals(bigCount + ": entry coefficients.bin declares 1048599 values (4194408 bytes) but holds 104"
                + " bytes", size.getMessage());
        byte[] shortCoef = java.util.Arrays.copyOf(entry(fixture(), "coefficients.bin"), 50);
        File cut = withEntry("coefficients.bin", shortCoef);
        IOException truncated = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(cut));
        assertEquals(cut + ": entry coefficients.bin declares 23 values (104 bytes) but holds 50 bytes",
                truncated.getMessage());
        File noConf = withEntry("configuration.json", null);
        IOException missing = assertThrows(IOException.class, () -> ModelSerializer.restoreMultiLayerNetwork(noConf));
        assertTrue(missing.getMessage().contains("missing entry configuration.json"), missing.getMessage());
    }
}
