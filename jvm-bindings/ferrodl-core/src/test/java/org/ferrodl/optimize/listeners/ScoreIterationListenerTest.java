package org.ferrodl.optimize.listeners;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.listeners.ListenerTestSupport.LogCapture;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** Needs the native library. */
class ScoreIterationListenerTest {

    @Test
    void logsTheScoreEveryNIterationsStartingAtIterationZero() {
        DataSet d = ListenerTestSupport.data(20);
        List<Double> scores = new ArrayList<>();
        try (MultiLayerNetwork net = new MultiLayerNetwork(ListenerTestSupport.regression());
             LogCapture log = new LogCapture(ScoreIterationListener.class)) {
            net.init();
            net.setListeners(new ScoreIterationListener(2), (m, i, e) -> scores.add(m.score()));
            for (int i = 0; i < 5; i++) {
                net.fit(d);
            }
            assertEquals(List.of("Score at iteration 0 is " + scores.get(0), "Score at iteration 2 is " + scores.get(2),
                    "Score at iteration 4 is " + scores.get(4)), log.messages);
        }
    }

    @Test
    void defaultsAndValidation() throws Exception {
        assertEquals(10, new ScoreIterationListener().getPrintIterations());
        assertThrows(IllegalArgumentException.class, () -> new ScoreIterationListener(0));
        assertEquals(3, SerializationUtil.javaRoundTrip(new ScoreIterationListener(3)).getPrintIterations());
    }
}
