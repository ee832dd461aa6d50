package org.ferrodl.nn.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.nn.conf.distribution.NormalDistribution;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;

/** Shared helpers of the configuration tests (pure Java, no native library). */
public final class ConfTestSupport {
    private ConfTestSupport() {
    }

    /** Sets every base-layer option to a non-default value. */
    public static <T extends BaseLayer.Builder<T>> T allBaseOptions(T b) {
        return b.name("layerUnderTest").dropOut(0.7).activation(Activation.TANH)
                .weightInit(new NormalDistribution(0.1, 0.2)).biasInit(0.3)
                .l1(0.01).l2(0.02).l1Bias(0.03).l2Bias(0.04).weightDecay(0.05).weightDecayBias(0.06)
                .updater(new Adam(0.002, 0.8, 0.99, 1e-6)).biasUpdater(new Nesterovs(0.05, 0.95))
                .gradientNormalization(GradientNormalization.ClipL2PerLayer).gradientNormalizationThreshold(2.5);
    }

    /** Checks every base-layer option set by {@link #allBaseOptions}. */
    public static void checkAllBaseOptions(BaseLayer l) {
        assertEquals("layerUnderTest", l.getLayerName());
        assertEquals(0.7, l.getDropOut());
        assertEquals(Activation.TANH, l.getActivation());
        assertEquals(WeightInit.DISTRIBUTION, l.getWeightInit());
        assertEquals(new NormalDistribution(0.1, 0.2), l.getWeightInitDistribution());
        assertEquals(0.3, l.getBiasInit());
        assertEquals(0.01, l.getL1());
        assertEquals(0.02, l.getL2());
        assertEquals(0.03, l.getL1Bias());
        assertEquals(0.04, l.getL2Bias());
        assertEquals(0.05, l.getWeightDecay());
        assertEquals(0.06, l.getWeightDecayBias());
        assertEquals(new Adam(0.002, 0.8, 0.99, 1e-6), l.getIUpdater());
        assertEquals(new Nesterovs(0.05, 0.95), l.getBiasUpdater());
        assertEquals(GradientNormalization.ClipL2PerLayer, l.getGradientNormalization());
        assertEquals(2.5, l.getGradientNormalizationThreshold());
    }

    /** A network of the given layers on the given input (null: none), with fixed globals. */
    public static MultiLayerConfiguration network(InputType in, Layer... layers) {
        NeuralNetConfiguration.ListBuilder lb = new NeuralNetConfiguration.Builder().seed(42).list(layers);
        if (in != null) {
            lb.setInputType(in);
        }
        return lb.build();
    }

    /**
     * Round-trips through JSON, YAML, Java serialization, Kryo and clone; checks equality, hash code and
     * a stable JSON form; returns the layer {@code index} of each copy, for field checks.
     */
    public static Layer[] roundTrips(MultiLayerConfiguration c, int index) throws Exception {
        String json = c.toJson();
        MultiLayerConfiguration fromJson = MultiLayerConfiguration.fromJson(json);
        MultiLayerConfiguration fromYaml = MultiLayerConfiguration.fromYaml(c.toYaml());
        MultiLayerConfiguration fromJava = SerializationUtil.javaRoundTrip(c);
        MultiLayerConfiguration cloned = c.clone();
        MultiLayerConfiguration fromKryo = (MultiLayerConfiguration) SerializationUtil.kryoRoundTrip(c);
        for (MultiLayerConfiguration copy : new MultiLayerConfiguration[] {fromJson, fromYaml, fromJava, cloned,
            fromKryo}) {
            assertEquals(c, copy);
            assertEquals(c.hashCode(), copy.hashCode());
            assertEquals(json, copy.toJson());
            assertNotSame(c.getLayers().get(index), copy.getLayers().get(index));
        }
        assertFalse(c.toYaml().contains("!<"), "YAML types must be plain properties");
        return new Layer[] {c.getLayers().get(index), fromJson.getLayers().get(index),
            fromYaml.getLayers().get(index), fromJava.getLayers().get(index), cloned.getLayers().get(index),
            fromKryo.getLayers().get(index)};
    }

    /** @return the JSON object of layer {@code index} */
    public static JsonNode layerJson(MultiLayerConfiguration c, int index) throws Exception {
        return new ObjectMapper().readTree(c.toJson()).get("layers").get(index);
    }

    /** @return the field names of a JSON object */
    public static Set<String> fieldNames(JsonNode n) {
        Set<String> s = new TreeSet<>();
        for (Iterator<String> it = n.fieldNames(); it.hasNext();) {
            s.add(it.next());
        }
        return s;
    }

    /** Expects a configuration error and returns its message. */
    public static String invalid(Runnable r) {
        return assertThrows(DL4JInvalidConfigException.class, r::run).getMessage();
    }
}
