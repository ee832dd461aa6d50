package org.ferrodl.spark.impl.common;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.ferrodl.jni.NativeInfo;

/**
 * Sets the native engine up for the running task: its thread pool from the cores Spark gives the
 * task ({@code spark.task.cpus}), not from the machine (an executor that runs several tasks at once
 * would otherwise start cores × tasks busy threads), and its native memory budget from the
 * application's configuration ({@link #nativeMemoryBudget(SparkConf)}), so that what the engine
 * holds outside the Java heap stays inside what Spark reserved for it.
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
        SparkEnv env = SparkEnv.get();
        if (env != null) {
            long budget = nativeMemoryBudget(env.conf());
            if (budget > 0) {
                NativeInfo.setNativeMemoryBudget(budget);
            }
        }
        return threads;
    }

    /** The ferrodl option that sets the native memory budget (a Spark size, e.g. {@code 2g}). */
    public static final String NATIVE_MEMORY_BUDGET = "spark.ferrodl.nativeMemoryBudget";

    /**
     * The native memory budget for this application's executors, in bytes: {@value
     * #NATIVE_MEMORY_BUDGET} when set, else {@code spark.executor.memoryOverhead} when the user set
     * it (Spark's unit for it is MiB), else 0 (the engine's default: the machine's physical memory).
     *
     * @param conf the application's configuration
     * @return bytes, or 0 for "leave the default"
     * @throws IllegalArgumentException for a value that is not a positive size, naming the option
     */
    public static long nativeMemoryBudget(SparkConf conf) {
        long bytes;
        String key;
        if (conf.contains(NATIVE_MEMORY_BUDGET)) {
            key = NATIVE_MEMORY_BUDGET;
            bytes = sizeOf(conf, key, false);
        } else if (conf.contains("spark.executor.memoryOverhead")) {
            key = "spark.executor.memoryOverhead";
            bytes = sizeOf(conf, key, true);
        } else {
            return 0;
        }
        if (bytes <= 0) {
            throw new IllegalArgumentException(key + "=" + conf.get(key)
                    + " is not a native memory budget: give a positive size such as 2g");
        }
        return bytes;
    }

    private static long sizeOf(SparkConf conf, String key, boolean mebibytes) {
        try {
            return mebibytes ? conf.getSizeAsMb(key) << 20 : conf.getSizeAsBytes(key);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + conf.get(key)
                    + " is not a size (examples: 512m, 2g, 1073741824)", e);
        }
    }
}
