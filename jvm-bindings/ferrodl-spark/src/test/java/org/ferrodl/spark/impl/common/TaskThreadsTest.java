package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.spark.SparkTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The engine's threads follow the task's cores (spark.task.cpus = 1 in the shared local context). */
class TaskThreadsTest {

    @AfterEach
    void restoreDefault() {
        NativeInfo.setNumThreads(0);
        NativeInfo.setNativeMemoryBudget(0);
    }

    @Test
    void theNativeMemoryBudgetComesFromTheFerrodlOptionElseTheMemoryOverhead() {
        assertEquals(0, TaskThreads.nativeMemoryBudget(new SparkConf(false)));
        assertEquals(2L << 30, TaskThreads.nativeMemoryBudget(
                new SparkConf(false).set(TaskThreads.NATIVE_MEMORY_BUDGET, "2g")));
        // Spark's memoryOverhead is in MiB without a unit.
        assertEquals(384L << 20, TaskThreads.nativeMemoryBudget(
                new SparkConf(false).set("spark.executor.memoryOverhead", "384")));
        assertEquals(1L << 30, TaskThreads.nativeMemoryBudget(new SparkConf(false)
                .set("spark.executor.memoryOverhead", "384").set(TaskThreads.NATIVE_MEMORY_BUDGET, "1g")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TaskThreads
                .nativeMemoryBudget(new SparkConf(false).set(TaskThreads.NATIVE_MEMORY_BUDGET, "lots")));
        assertTrue(e.getMessage().startsWith("spark.ferrodl.nativeMemoryBudget=lots is not a size"), e.getMessage());
    }

    @Test
    void aTaskAppliesTheBudgetOfTheApplicationConfiguration() throws Exception {
        SparkConf conf = SparkEnv.get().conf();
        conf.set(TaskThreads.NATIVE_MEMORY_BUDGET, "64m");
        try {
            List<Long> seen = SparkTestSupport.sc().parallelize(Arrays.asList(1, 2), 1)
                    .mapPartitions(it -> {
                        TaskThreads.configure(1);
                        return Collections.singletonList(new ObjectMapper().readTree(NativeInfo.nativeMemory())
                                .get("budget").asLong()).iterator();
                    }).collect();
            assertEquals(Collections.singletonList(64L << 20), seen);
        } finally {
            conf.remove(TaskThreads.NATIVE_MEMORY_BUDGET);
        }
    }

    @Test
    void insideATaskTheThreadCountIsTheTaskCoresDividedByReplicas() {
        NativeInfo.setNumThreads(7);
        List<Integer> seen = SparkTestSupport.sc().parallelize(Arrays.asList(1, 2, 3, 4), 2)
                .mapPartitions(it -> {
                    int set = TaskThreads.configure(1);
                    return Collections.singletonList(set * 100 + NativeInfo.numThreads()).iterator();
                }).collect();
        // local mode: the tasks run in this JVM, each with spark.task.cpus = 1.
        assertEquals(Arrays.asList(101, 101), seen);
        assertEquals(1, NativeInfo.numThreads());
    }

    @Test
    void outsideATaskNothingChanges() {
        NativeInfo.setNumThreads(5);
        assertEquals(0, TaskThreads.configure(2));
        assertEquals(5, NativeInfo.numThreads());
    }
}
