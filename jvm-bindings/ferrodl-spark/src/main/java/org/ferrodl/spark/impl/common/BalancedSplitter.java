package org.ferrodl.spark.impl.common;

import java.util.Random;

/**
 * Deals DataSet objects into splits and, within a split, into equal contiguous worker shares.
 * An object's <em>position</em> is its index in the (optionally shuffled) order; split {@code s}
 * holds positions {@code [s·S, (s+1)·S)} and worker {@code w} of that split the positions
 * {@code [s·S + w·m, s·S + (w+1)·m)} where {@code m = S / numWorkers}. A short last split is
 * dealt the same way with {@code m = ceil(rest / numWorkers)}, so some workers may get nothing.
 */
public final class BalancedSplitter implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final long numObjects;
    private final int numWorkers;
    private final int objectsPerWorker;

    /**
     * @param numObjects       number of DataSet objects in the RDD
     * @param numWorkers       workers per split
     * @param objectsPerWorker objects each worker gets in a full split (at least 1)
     */
    public BalancedSplitter(long numObjects, int numWorkers, int objectsPerWorker) {
        if (numWorkers <= 0 || objectsPerWorker <= 0) {
            throw new IllegalArgumentException("numWorkers (" + numWorkers + ") and objectsPerWorker ("
                    + objectsPerWorker + ") must be positive");
        }
        this.numObjects = numObjects;
        this.numWorkers = numWorkers;
        this.objectsPerWorker = objectsPerWorker;
    }

    public long objectsPerSplit() {
        return (long) numWorkers * objectsPerWorker;
    }

    public int numSplits() {
        return (int) ((numObjects + objectsPerSplit() - 1) / objectsPerSplit());
    }

    /** Split of a position. */
    public int splitOf(long position) {
        return (int) (position / objectsPerSplit());
    }

    /** Worker (0-based, within its split) of a position. */
    public int workerOf(long position) {
        int split = splitOf(position);
        long start = split * objectsPerSplit();
        long size = Math.min(objectsPerSplit(), numObjects - start);
        long share = (size + numWorkers - 1) / numWorkers;
        return (int) ((position - start) / share);
    }

    /**
     * A permutation of {@code 0..n-1} (Fisher–Yates with {@link Random}): {@code result[index]} is
     * the position of the object at {@code index}.
     */
    public static int[] shuffledPositions(int n, long seed) {
        int[] perm = new int[n];
        for (int i = 0; i < n; i++) {
            perm[i] = i;
        }
        Random rng = new Random(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        return perm;
    }
}
