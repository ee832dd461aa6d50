package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
