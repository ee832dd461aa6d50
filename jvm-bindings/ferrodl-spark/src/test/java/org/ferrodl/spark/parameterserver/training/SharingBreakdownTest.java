package org.ferrodl.spark.parameterserver.training;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ferrodl.spark.api.TimeBreakdown;
import org.junit.jupiter.api.Test;

/**
 * The gradient-sharing time breakdown by hand: a task that finished its partition before the
 * others waits for the last one, and that wait is its own phase, not "unaccounted".
 */
class SharingBreakdownTest {

    /** A worker result of one replica whose steps took {@code computeMs} of compute. */
    private static SharedWorkerResult result(int partition, long startWall, long fitMillis, long computeMs) {
        String replica = "{\"minibatches\":100,\"stepTimes\":{\"computeNanos\":" + computeMs * 1_000_000L + "}}";
        return new SharedWorkerResult(partition, 0, "driver", fitMillis, "{\"decodeReceivedMillis\":0}",
                List.of(replica), 100, 1600, startWall, 0, 0, 0, computeMs * 1_000_000L, 0, 0);
    }

    @Test
    void aTaskThatEndsFirstWaitsForTheLast() {
        long job = 1_000_000;
        // both start 10 ms after the job; one trains 600 ms, the other 900 ms; the job ends 5 ms
        // after the last task; the fit took 930 ms on the driver (15 ms before and after the job)
        List<SharedWorkerResult> results = List.of(result(0, job + 10, 600, 600), result(1, job + 10, 900, 900));
        TimeBreakdown b = SharedTrainingDriver.breakdown(results, 930, 5, 5, job, job + 915, 2, 3);
        Map<String, Double> total = new HashMap<>();
        for (TimeBreakdown.Phase p : b.getPhases()) {
            total.put(p.name(), p.totalMillis());
        }
        assertEquals(300, total.get("done, waiting for the last task to finish its partition"), 1e-9);
        assertEquals(20, total.get("Spark scheduling and task start"), 1e-9);
        assertEquals(1500, total.get("compute: forward, backward, updater"), 1e-9);
        assertEquals(5, total.get("task results to the driver"), 1e-9);
        // per worker iteration: 930 / 100 = 9.3 ms of wall = the mean worker's phases (20 + 1500 +
        // 300 over 200 worker minibatches, 9.1 ms) + the driver's (5 + 5 + 5 + 2 + 3 over 100,
        // 0.2 ms): nothing left unaccounted (before this phase, 1.5 ms of the 9.3 were)
        assertEquals(9.3, b.getWallMillisPerIteration(), 1e-9);
        assertEquals(0.0, b.getUnaccountedMillis(), 1e-9);
    }
}
