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
     * Positions (indexed by RDD order) that deal an RDD with one partition per worker in place: split
     * {@code s} takes the {@code s}-th run of {@code objectsPerWorker} objects of every partition (in
     * partition order, or in a shuffle of partition {@code p} seeded with {@code seed + p}), laid out
     * partition after partition. With partitions of equal size worker {@code w}'s share of every split
     * is then partition {@code w}'s own objects, so nothing moves between executors; the objects of a
     * larger partition beyond the others' runs cross over. This is what the reference's Balanced
     * repartitioning does: it leaves a split whose partitions already hold the right counts in place.
     * With one partition it equals {@link #shuffledPositions} with the same seed (or RDD order).
     *
     * @param sizes            objects per partition (one partition per worker)
     * @param objectsPerWorker objects each worker gets in a full split (at least 1)
     * @param seed             seed of the per-partition shuffles, or null for partition order
     */
    public static int[] inPlacePositions(long[] sizes, int objectsPerWorker, Long seed) {
        if (objectsPerWorker <= 0) {
            throw new IllegalArgumentException("objectsPerWorker must be positive, got " + objectsPerWorker);
        }
        long total = 0;
        long longest = 0;
        long[] offsets = new long[sizes.length];
        int[][] byRank = new int[sizes.length][];
        for (int p = 0; p < sizes.length; p++) {
            offsets[p] = total;
            total += sizes[p];
            longest = Math.max(longest, sizes[p]);
            if (seed != null) {
                int[] rank = shuffledPositions((int) sizes[p], seed + p);
                byRank[p] = new int[rank.length];
                for (int i = 0; i < rank.length; i++) {
                    byRank[p][rank[i]] = i;
                }
            }
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(total + " objects exceed " + Integer.MAX_VALUE);
        }
        int[] out = new int[(int) total];
        int position = 0;
        for (long run = 0; run * objectsPerWorker < longest; run++) {
            for (int p = 0; p < sizes.length; p++) {
                long end = Math.min((run + 1) * objectsPerWorker, sizes[p]);
                for (long k = run * objectsPerWorker; k < end; k++) {
                    long index = byRank[p] == null ? k : byRank[p][(int) k];
                    out[(int) (offsets[p] + index)] = position++;
                }
            }
        }
        return out;
    }

    /**
     * The partitions each worker's objects come from, ascending: the blocks a worker reads when it
     * takes its objects from the partitions in place.
     *
     * @param sizes     objects per partition
     * @param positions the position of each object by RDD index, or null for RDD order
     */
    public int[][] partitionsOfWorkers(long[] sizes, int[] positions) {
        boolean[][] reads = new boolean[numWorkers][sizes.length];
        long index = 0;
        for (int p = 0; p < sizes.length; p++) {
            for (long i = 0; i < sizes[p]; i++, index++) {
                reads[workerOf(positions == null ? index : positions[(int) index])][p] = true;
            }
        }
        int[][] out = new int[numWorkers][];
        for (int w = 0; w < numWorkers; w++) {
            int n = 0;
            for (boolean r : reads[w]) {
                n += r ? 1 : 0;
            }
            out[w] = new int[n];
            for (int p = 0, j = 0; p < sizes.length; p++) {
                if (reads[w][p]) {
                    out[w][j++] = p;
                }
            }
        }
        return out;
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
