package org.ferrodl.optimize.listeners;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.listeners.ListenerTestSupport.LogCapture;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** Needs the native library. */
class PerformanceListenerTest {

    @Test
    void reportsPositiveThroughputEveryIterationOfAnIteratorFit() {
        DataSet d = ListenerTestSupport.data(96);
        PerformanceListener p = new PerformanceListener(1, true);
        try (MultiLayerNetwork net = new MultiLayerNetwork(ListenerTestSupport.regression());
             LogCapture log = new LogCapture(PerformanceListener.class)) {
            net.init();
            net.setListeners(p);
            assertTrue(Double.isNaN(p.getLastSamplesPerSecond()), "nothing measured yet");
            net.fit(new ListDataSetIterator(d.asList(), 32), 2); // 3 minibatches of 32 per epoch
            assertEquals(6, p.getReportCount(), "each epoch's first minibatch is timed from onEpochStart");
            assertEquals(5, p.getLastReportedIteration());
            assertTrue(p.getLastSamplesPerSecond() > 0, "samples/s " + p.getLastSamplesPerSecond());
            assertTrue(p.getLastBatchesPerSecond() > 0, "batches/s " + p.getLastBatchesPerSecond());
            assertTrue(p.getLastIterationTimeMs() > 0, "iteration ms " + p.getLastIterationTimeMs());
            // one minibatch per report: examples/s = 32 · batches/s, and time = 1000 / batches/s
            assertEquals(32.0, p.getLastSamplesPerSecond() / p.getLastBatchesPerSecond(), 1e-9);
            assertEquals(1000.0 / p.getLastBatchesPerSecond(), p.getLastIterationTimeMs(), 1e-6);
            assertEquals(net.score(), p.getLastScore(), 0.0);
            assertTrue(p.getLastEtlTimeMs() >= 0);
            assertEquals(6, log.messages.size());
            String last = log.messages.get(5);
            for (String part : new String[] {"ETL: ", "iteration 5;", "iteration time: ", "samples/sec: ",
                "batches/sec: ", "score: " + net.score()}) {
                assertTrue(last.contains(part), part + " in " + last);
            }
        }
    }

    @Test
    void withoutEpochEventsTheFirstMinibatchIsNotTimedAndReportsFollowTheFrequency() {
        DataSet d = ListenerTestSupport.data(10);
        PerformanceListener p = new PerformanceListener.Builder().setFrequency(2).reportScore(false)
                .reportETL(false).build();
        try (MultiLayerNetwork net = new MultiLayerNetwork(ListenerTestSupport.regression());
             LogCapture log = new LogCapture(PerformanceListener.class)) {
            net.init();
            net.setListeners(p);
            net.fit(d); // iteration 0: no start time, nothing to report
            net.fit(d); // iteration 1: timed, not a reporting iteration
            assertEquals(0, p.getReportCount());
            net.fit(d); // iteration 2: report over iterations 1 and 2
            assertEquals(1, p.getReportCount());
            assertEquals(2, p.getLastReportedIteration());
            assertEquals(10.0, p.getLastSamplesPerSecond() / p.getLastBatchesPerSecond(), 1e-9);
            assertEquals(1, log.messages.size());
            assertFalse(log.messages.get(0).contains("score"), log.messages.get(0));
            assertFalse(log.messages.get(0).contains("ETL"), log.messages.get(0));
        }
    }

    @Test
    void validationAndSerialization() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> new PerformanceListener(0));
        assertThrows(IllegalArgumentException.class, () -> new PerformanceListener.Builder().setFrequency(-1).build());
        PerformanceListener copy = SerializationUtil.javaRoundTrip(new PerformanceListener(4, true));
        assertEquals(4, copy.getFrequency());
        assertEquals(0, copy.getReportCount());
    }
}
