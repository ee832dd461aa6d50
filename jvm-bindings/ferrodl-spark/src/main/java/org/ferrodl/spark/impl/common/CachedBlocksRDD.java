package org.ferrodl.spark.impl.common;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import org.apache.spark.Partition;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.StorageLevel;
import scala.collection.Iterator;

/**
 * A persisted RDD whose tasks carry its partitions by index. A task carries the partition it reads,
 * and a parallelized RDD's partitions hold their data (to recompute a lost block), so every job over
 * a cached parallelized RDD shipped the data again: 12 MiB per task for the MNIST bench's training
 * RDD, 250 ms for a job that only counts its 250 cached minibatches on local[2]. Here the driver
 * decides while it serializes each task: the parent's partition travels only when its block is
 * cached nowhere at that moment (first use, or its executor lost), so a lost block is still
 * recomputed from its source, by the task's next attempt if it vanished after a launch.
 *
 * @param <T> the element type
 */
public final class CachedBlocksRDD<T> extends RDD<T> {
    private static final long serialVersionUID = 1L;
    private final RDD<T> parent;

    private CachedBlocksRDD(RDD<T> parent) {
        super(parent, parent.elementClassTag());
        this.parent = parent;
    }

    /** {@code rdd} read by index where it is persisted; {@code rdd} itself where it is not. */
    public static <T> JavaRDD<T> of(JavaRDD<T> rdd) {
        if (rdd.getStorageLevel().equals(StorageLevel.NONE())) {
            return rdd;
        }
        return new CachedBlocksRDD<>(rdd.rdd()).toJavaRDD();
    }

    @Override
    public Partition[] getPartitions() {
        Partition[] sources = parent.partitions();
        Partition[] out = new Partition[sources.length];
        for (int i = 0; i < sources.length; i++) {
            out[i] = new Slot(i, parent.id(), sources[i]);
        }
        return out;
    }

    @Override
    public Iterator<T> compute(Partition split, TaskContext context) {
        Slot slot = (Slot) split;
        if (slot.source != null) {
            return parent.iterator(slot.source, context);
        }
        try {
            return parent.iterator(new ByIndex(slot.index), context);
        } catch (ClassCastException e) {
            // the block was dropped after the launch: the parent would compute it from a partition
            // this attempt does not carry; Spark's next attempt carries it
            throw new IllegalStateException("block " + slot.index + " of the cached RDD " + slot.parentRddId
                    + " was evicted or lost after this task was launched; the next attempt recomputes it", e);
        }
    }

    /** Whether some executor holds block {@code index} of RDD {@code rddId} (asked on the driver). */
    static boolean cachedSomewhere(int rddId, int index) {
        return SparkEnv.get() != null && !holders(rddId, index).isEmpty();
    }

    /**
     * Per block of the cached RDD {@code rddId}, the executors holding it as Spark task locations
     * ("executor_HOST_ID", so that a task runs where its block is), or null when a block is cached
     * nowhere (a read by index would have to compute it without its partition). Asked on the driver.
     */
    public static String[][] blockLocations(int rddId, int partitions) {
        String[][] out = new String[partitions][];
        for (int p = 0; p < partitions; p++) {
            scala.collection.Seq<BlockManagerId> at = holders(rddId, p);
            if (at.isEmpty()) {
                return null;
            }
            out[p] = new String[at.length()];
            for (int i = 0; i < out[p].length; i++) {
                out[p][i] = "executor_" + at.apply(i).host() + "_" + at.apply(i).executorId();
            }
        }
        return out;
    }

    private static scala.collection.Seq<BlockManagerId> holders(int rddId, int index) {
        return SparkEnv.get().blockManager().master().getLocations(new RDDBlockId(rddId, index));
    }

    /** A partition of this RDD: its index, and the parent's partition when its block must be recomputed. */
    static final class Slot implements Partition {
        private static final long serialVersionUID = 1L;
        private final int index;
        private final int parentRddId;
        private transient Partition source;

        Slot(int index, int parentRddId, Partition source) {
            this.index = index;
            this.parentRddId = parentRddId;
            this.source = source;
        }

        @Override
        public int index() {
            return index;
        }

        /** Whether this slot's task carries the parent's partition (tests). */
        boolean carriesSource() {
            return source != null;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Slot s && s.index == index && s.parentRddId == parentRddId;
        }

        @Override
        public int hashCode() {
            return 31 * parentRddId + index;
        }

        private void writeObject(ObjectOutputStream out) throws IOException {
            out.defaultWriteObject();
            out.writeObject(cachedSomewhere(parentRddId, index) ? null : source);
        }

        private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
            in.defaultReadObject();
            source = (Partition) in.readObject();
        }
    }

    /**
     * A partition known by its index alone: all that reading a cached block needs (a parent that
     * must compute the block fails on it with a ClassCastException, which callers turn into a clear
     * error).
     */
    public record ByIndex(int index) implements Partition {
    }
}
