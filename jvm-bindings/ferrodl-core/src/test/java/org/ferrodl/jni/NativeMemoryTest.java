package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ferrodl.exception.NativeMemoryException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Oversized networks and minibatches are refused with {@link NativeMemoryException} before any
 * native memory is taken (they used to abort the JVM with "memory allocation failed"); the
 * process-wide budget is reported and settable.
 */
class NativeMemoryTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @AfterEach
    void restoreBudget() {
        NativeInfo.setNativeMemoryBudget(0);
    }

    private static MultiLayerConfiguration mlp(long nIn, long hidden) {
        return new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new DenseLayer.Builder().nIn(nIn).nOut(hidden).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(hidden).nOut(2)
                        .activation(Activation.SOFTMAX).build())
                .build();
    }

    @Test
    void aNetworkLargerThanTheBudgetIsRefusedNamingTheLayerAndTheBytes() {
        for (long n : new long[] {1L << 20, 1L << 16}) {
            MultiLayerNetwork net = new MultiLayerNetwork(mlp(n, n));
            NativeMemoryException e = assertThrows(NativeMemoryException.class, net::init);
            assertTrue(e.getMessage().contains("(the largest block: layer 0 (DenseLayer), "), e.getMessage());
            assertTrue(e.getMessage().contains("bytes of native memory, but the native memory budget is"),
                    e.getMessage());
            net.close();
        }
        // The engine is unharmed: a normal network still works.
        try (MultiLayerNetwork ok = new MultiLayerNetwork(mlp(4, 8))) {
            ok.init();
            assertTrue(ok.numParams() > 0);
        }
    }

    @Test
    void aMinibatchOverTheBudgetIsRefusedAndPassesUnderALargerOne() throws Exception {
        try (MultiLayerNetwork net = new MultiLayerNetwork(mlp(1, 1000))) {
            net.init();
            int rows = 20_000;
            float[] x = new float[rows];
            float[] y = new float[rows * 2];
            for (int r = 0; r < rows; r++) {
                x[r] = (r % 7) / 7f;
                y[2 * r + (r % 2)] = 1f;
            }
            DataSet batch = new DataSet(Nd4j.create(x, rows, 1), Nd4j.create(y, rows, 2));
            JsonNode mem = JSON.readTree(NativeInfo.nativeMemory());
            long inUse = mem.get("inUse").asLong();
            assertTrue(inUse > 0 && mem.get("peak").asLong() >= inUse && mem.get("budget").asLong() > 0, mem.toString());
            long[] bytes = NativeInfo.nativeMemoryBytes();
            assertTrue(bytes.length == 3 && bytes[0] > 0 && bytes[1] >= bytes[0]
                    && bytes[2] == mem.get("budget").asLong(), java.util.Arrays.toString(bytes));
            NativeInfo.setNativeMemoryBudget(inUse + (16L << 20));
            NativeMemoryException e = assertThrows(NativeMemoryException.class, () -> net.fit(batch));
            assertTrue(e.getMessage().startsWith(
                    "the activations of layer 0 (DenseLayer) for a minibatch of 20000 examples needs 80,000,000 bytes"),
                    e.getMessage());
            NativeInfo.setNativeMemoryBudget(inUse + (512L << 20));
            net.fit(batch);
            assertTrue(Double.isFinite(net.score()));
        }
        assertThrows(DL4JInvalidInputException.class, () -> NativeInfo.setNativeMemoryBudget(-1));
    }

    /**
     * A layer's own workspace is budgeted like activations: one 16×16 filter over a 256×256 image
     * needs 59.5 MB of im2col columns for 232 KB of activations. Refused under a budget of 16 MiB
     * more than in use, naming the layer and the exact bytes; the same fit passes at 256 MiB.
     */
    @Test
    void aConvolutionWorkspaceOverTheBudgetIsRefusedNamingTheLayer() throws Exception {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new ConvolutionLayer.Builder(16, 16).nOut(1).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(256, 256, 1))
                .build();
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            net.init();
            float[] x = new float[256 * 256];
            for (int i = 0; i < x.length; i++) {
                x[i] = (i % 13) / 13f;
            }
            DataSet one = new DataSet(Nd4j.create(x, 1, x.length), Nd4j.create(new float[] {1, 0}, 1, 2));
            long inUse = JSON.readTree(NativeInfo.nativeMemory()).get("inUse").asLong();
            NativeInfo.setNativeMemoryBudget(inUse + (16L << 20));
            NativeMemoryException e = assertThrows(NativeMemoryException.class, () -> net.fit(one));
            // 256 column rows × 241² positions, plus the 257-value gradient share, in f32.
            assertTrue(e.getMessage().startsWith("the convolution workspace (im2col columns) of layer 0 "
                    + "(ConvolutionLayer) for a minibatch of 1 examples needs 59,475,972 bytes of native memory"),
                    e.getMessage());
            NativeInfo.setNativeMemoryBudget(inUse + (256L << 20));
            net.fit(one);
            assertTrue(Double.isFinite(net.score()));
        }
    }
}
