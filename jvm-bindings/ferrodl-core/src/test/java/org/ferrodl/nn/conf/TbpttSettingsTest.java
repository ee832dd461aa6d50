package org.ferrodl.nn.conf;

import static org.ferrodl.nn.conf.ConfTestSupport.invalid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.junit.jupiter.api.Test;

/** The truncated-BPTT settings of both builders: defaults, and lengths ≤ 0 refused naming the setting. */
class TbpttSettingsTest {

    private static NeuralNetConfiguration.ListBuilder list() {
        return new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new DenseLayer.Builder().nIn(3).nOut(4).build())
                .layer(new OutputLayer.Builder(LossFunction.MSE).nOut(2).build());
    }

    private static ComputationGraphConfiguration.GraphBuilder graph() {
        return new NeuralNetConfiguration.Builder().seed(1).graphBuilder().addInputs("in")
                .addLayer("d", new DenseLayer.Builder().nIn(3).nOut(4).build(), "in")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).nOut(2).build(), "d").setOutputs("out");
    }

    @Test
    void defaultsAreTheReferences() {
        MultiLayerConfiguration c = list().build();
        assertEquals(BackpropType.Standard, c.getBackpropType());
        assertEquals(20, c.getTbpttFwdLength());
        assertEquals(20, c.getTbpttBackLength());
        assertTrue(c.getInputPreProcessors().isEmpty());
        ComputationGraphConfiguration g = graph().build();
        assertEquals(BackpropType.Standard, g.getBackpropType());
        assertEquals(20, g.getTbpttFwdLength());
        assertEquals(20, g.getTbpttBackLength());
    }

    @Test
    void lengthsBelowOneAreRefusedNamingTheSetting() {
        for (int bad : new int[] {0, -3}) {
            String m = invalid(() -> list().backpropType(BackpropType.TruncatedBPTT).tBPTTForwardLength(bad).build());
            assertTrue(m.contains("tbpttFwdLength is " + bad) && m.contains("tBPTTForwardLength"), m);
            m = invalid(() -> list().backpropType(BackpropType.TruncatedBPTT).tBPTTBackwardLength(bad).build());
            assertTrue(m.contains("tbpttBackLength is " + bad) && m.contains("tBPTTBackwardLength"), m);
            m = invalid(() -> list().tBPTTLength(bad).build());
            assertTrue(m.contains("tbpttFwdLength is " + bad), m);
            m = invalid(() -> graph().backpropType(BackpropType.TruncatedBPTT).tBPTTForwardLength(bad).build());
            assertTrue(m.contains("tbpttFwdLength is " + bad), m);
            m = invalid(() -> graph().tBPTTLength(bad).build());
            assertTrue(m.contains("tbpttFwdLength is " + bad), m);
            m = invalid(() -> graph().tBPTTBackwardLength(bad).build());
            assertTrue(m.contains("tbpttBackLength is " + bad), m);
        }
        assertThrows(NullPointerException.class, () -> list().backpropType(null));
        String m = invalid(() -> list().inputPreProcessor(-1, null));
        assertTrue(m.contains("-1"), m);
    }
}
