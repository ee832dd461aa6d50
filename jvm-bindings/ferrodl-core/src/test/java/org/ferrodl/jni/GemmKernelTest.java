package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The f32 GEMM kernel choice as seen from the JVM (needs the native library). */
class GemmKernelTest {

    private static JsonNode kernel() throws Exception {
        return new ObjectMapper().readTree(NativeInfo.gemmKernel());
    }

    /** Whether this CPU advertises the AMX tile unit with bf16 (Linux only; false elsewhere). */
    private static boolean cpuHasAmx() throws Exception {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (!Files.isReadable(cpuinfo)) {
            return false;
        }
        String text = Files.readString(cpuinfo);
        return text.contains(" amx_bf16") && text.contains(" amx_tile");
    }

    @AfterEach
    void restore() {
        NativeInfo.setGemmKernel("auto");
    }

    @Test
    void reportsTheSettingAndTheKernelInForce() throws Exception {
        NativeInfo.setGemmKernel("auto");
        JsonNode auto = kernel();
        assertEquals("auto", auto.get("requested").asText());
        assertFalse(auto.get("reason").asText().isEmpty(), auto.toString());
        // Inside a JVM too, the OS must grant the AMX state wherever the CPU has it (the
        // permission request fails when a thread has a too small signal stack).
        assertEquals(cpuHasAmx() ? "amx" : "fma", auto.get("kernel").asText(), auto.toString());

        NativeInfo.setGemmKernel(" FMA ");
        JsonNode fma = kernel();
        assertEquals("fma", fma.get("requested").asText());
        assertEquals("fma", fma.get("kernel").asText());
    }

    @Test
    void unknownNamesAreRefusedWithTheName() {
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> NativeInfo.setGemmKernel("avx9000"));
        assertTrue(e.getMessage().contains("avx9000") && e.getMessage().contains("fma"), e.getMessage());
        assertThrows(DL4JInvalidInputException.class, () -> NativeInfo.setGemmKernel(null));
    }

    /**
     * A 784-500-10 network's output on a batch of 256 agrees between the kernels to fp32 accuracy
     * (both products forced onto AMX where available): the bf16x6 split keeps about 24 bits, so the
     * outputs differ by rounding only (tolerance 1e-5 absolute on softmax probabilities). Where the
     * CPU has no AMX both runs use FMA and agree exactly.
     */
    @Test
    void outputsOfBothKernelsAgreeToFp32Accuracy() throws Exception {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(5).updater(new Sgd(0.1)).list()
                .layer(new DenseLayer.Builder().nIn(784).nOut(500).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(500).nOut(10)
                        .activation(Activation.SOFTMAX).build())
                .build();
        float[] x = new float[256 * 784];
        Random r = new Random(3);
        for (int i = 0; i < x.length; i++) {
            x[i] = r.nextFloat();
        }
        INDArray input = Nd4j.create(x, new long[] {256, 784});
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            net.init();
            NativeInfo.setGemmKernel("fma");
            float[] fma = net.output(input).toFloatVector();
            NativeInfo.setGemmKernel("amx");
            float[] amx = net.output(input).toFloatVector();
            double worst = 0;
            for (int i = 0; i < fma.length; i++) {
                worst = Math.max(worst, Math.abs(fma[i] - amx[i]));
            }
            assertTrue(worst <= 1e-5, "largest difference " + worst);
            // Deterministic inputs: with AMX the two kernels sum in different orders, so some of
            // the 2,560 outputs differ in their last bits (proves the second run used AMX).
            assertEquals(cpuHasAmx(), worst > 0, "largest difference " + worst);
        }
    }
}
