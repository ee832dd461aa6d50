package org.ferrodl.spark.impl.common;

import org.apache.spark.TaskContext;
import org.ferrodl.jni.NativeInfo;

/**
 * Sizes the native engine's thread pool from the cores Spark gives the running task
 * ({@code spark.task.cpus}), not from the machine: an executor that runs several tasks at once
 * would otherwise start cores × tasks busy threads.
 */
public final class TaskThreads {
    private TaskThreads() {
    }

    /**
     * Called at the start of every task that runs the engine.
     *
     * @param replicas training threads the task runs side by side (workersPerNode); the task's
     *     cores are shared among them
     * @return the thread count set (1 or more), or 0 when not inside a Spark task
     */
    public static int configure(int replicas) {
        TaskContext task = TaskContext.get();
        if (task == null) {
            return 0;
        }
        int threads = Math.max(1, task.cpus() / Math.max(1, replicas));
        NativeInfo.setNumThreads(threads);
        return threads;
    }
}
