package org.ferrodl.spark.impl.paramavg;

import org.apache.spark.Dependency;
import org.apache.spark.NarrowDependency;
import org.apache.spark.Partition;
import org.apache.spark.Partitioner;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.ferrodl.spark.impl.common.CachedBlocksRDD;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.collection.immutable.List;
import scala.collection.immutable.Nil$;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Deals the objects of a cached RDD to the workers of a parameter-averaging fit without a shuffle:
 * partition {@code w} reads the parent partitions its objects are in (a narrow dependency on them, as
 * Spark's own coalescing does) and keeps the objects the partitioner gives worker {@code w}. A
 * shuffle serializes, writes and reads back every minibatch object of the fit (one Spark stage more
 * per fit); this reads the cached blocks in place: in one JVM (local[N]) from memory, on a cluster
 * its own executor's block from memory and any other through Spark's block manager (a whole block
 * fetched for the objects a task needs of it, so the caller limits it to few workers there; with the
 * in-place positions of equal partitions a task reads only its own block). Used when the parent is
 * cached (or every task would compute all of it) and has one partition per worker (what a barrier
 * stage requires of every RDD in it).
 *
 * @param <T> the object type (references, or minibatches)
 */
final class DealtRDD<T> extends RDD<Tuple2<Placed, T>> {
    private static final long serialVersionUID = 1L;
    /**
     * The parent's partitions as the driver knows them, by this RDD's id: a task in the driver's JVM
     * (local[N], the only place this RDD is used) takes them from here, so they are not serialized
     * into the task — a parallelized RDD's partitions carry its data (for recomputing a lost cached
     * block), which made a 24 MiB task binary per fit for the MNIST bench.
     */
    private static final java.util.Map<Integer, Partition[]> PARENTS = new java.util.concurrent.ConcurrentHashMap<>();
    private final RDD<Tuple2<Placed, T>> parent;
    private final Partitioner dealer;
    /** Per worker, the parent partitions holding its objects (ascending). */
    private final int[][] sources;
    private final int cachedRddId;
    /** Where task {@code w} should run (the executor holding block {@code w}), or null: driver only. */
    private final transient String[][] preferred;

    /**
     * @param parent      the RDD to deal, one partition per worker
     * @param dealer      the worker of each object
     * @param sources     per worker, the parent partitions that hold its objects (ascending)
     * @param cachedRddId the cached RDD whose blocks {@code parent} reads (itself, or the RDD it maps
     *                    partition by partition), for a clear error when a block is gone
     * @param preferred   per worker, the task locations to prefer (Spark's "executor_HOST_ID"
     *                    form), or null for none
     * @param inDriverJvm whether every task runs in this JVM (local[N]): the parent's partitions are
     *                    then taken from the driver's listing; elsewhere the cached blocks are read by
     *                    index
     */
    DealtRDD(RDD<Tuple2<Placed, T>> parent, Partitioner dealer, int[][] sources, int cachedRddId,
             String[][] preferred, boolean inDriverJvm) {
        super(parent.context(), dependencies(parent, sources), tag());
        if (dealer.numPartitions() != parent.getNumPartitions()) {
            throw new IllegalArgumentException("a DealtRDD needs one parent partition per worker: "
                    + parent.getNumPartitions() + " partitions, " + dealer.numPartitions() + " workers");
        }
        this.parent = parent;
        if (sources.length != dealer.numPartitions()) {
            throw new IllegalArgumentException("a DealtRDD needs the source partitions of each of its "
                    + dealer.numPartitions() + " workers, got " + sources.length);
        }
        this.dealer = dealer;
        this.sources = sources;
        this.cachedRddId = cachedRddId;
        this.preferred = preferred;
        if (inDriverJvm) {
            PARENTS.put(id(), parent.partitions());
        }
    }

    // an immutable List is the Seq of both Scala lines (2.12: collection.Seq, 2.13: immutable.Seq)
    @Override
    @SuppressWarnings("unchecked")
    public List<String> getPreferredLocations(Partition split) {
        String[] here = preferred == null ? null : preferred[split.index()];
        List<String> out = (List<String>) (List<?>) Nil$.MODULE$;
        if (here == null) {
            return out;
        }
        for (int i = here.length - 1; i >= 0; i--) {
            out = out.$colon$colon(here[i]);
        }
        return out;
    }

    @Override
    public Partition[] getPartitions() {
        Partition[] out = new Partition[dealer.numPartitions()];
        for (int i = 0; i < out.length; i++) {
            out[i] = new Index(i);
        }
        return out;
    }

    @Override
    public Iterator<Tuple2<Placed, T>> compute(Partition split, TaskContext context) {
        int worker = split.index();
        Partition[] known = PARENTS.get(id());
        // not the driver's JVM: the parent's partitions by index. A task does not carry them (a
        // parallelized RDD's partitions carry its data, 24 MiB per task for the MNIST bench), and its
        // copy of the parent cannot list them (a parallelized RDD's data stays in the driver); the
        // cached blocks are found by RDD id and index, which is all a cached read needs
        Partition[] all = known != null ? known : byIndex(dealer.numPartitions());
        Partition[] parents = new Partition[sources[worker].length];
        for (int i = 0; i < parents.length; i++) {
            parents[i] = all[sources[worker][i]];
        }
        return new AbstractIterator<>() {
            private int next;
            private Iterator<Tuple2<Placed, T>> current;
            private Tuple2<Placed, T> ahead;

            @Override
            public boolean hasNext() {
                while (ahead == null) {
                    if (current != null && current.hasNext()) {
                        Tuple2<Placed, T> t = current.next();
                        if (dealer.getPartition(t._1()) == worker) {
                            ahead = t;
                        }
                    } else if (next < parents.length) {
                        current = read(parents[next++], context);
                    } else {
                        return false;
                    }
                }
                return true;
            }

            @Override
            public Tuple2<Placed, T> next() {
                if (!hasNext()) {
                    throw new java.util.NoSuchElementException();
                }
                Tuple2<Placed, T> t = ahead;
                ahead = null;
                return t;
            }
        };
    }

    private Iterator<Tuple2<Placed, T>> read(Partition p, TaskContext context) {
        try {
            return parent.iterator(p, context);
        } catch (ClassCastException e) {
            if (!(p instanceof CachedBlocksRDD.ByIndex)) {
                throw e;
            }
            // a block missing from the cache: the parent would compute the partition from its source,
            // which needs the partition object this task does not have
            throw new IllegalStateException("parameter averaging: block " + p.index() + " of the cached training RDD "
                    + cachedRddId + " is no longer cached (evicted, or its executor lost) while the workers read it "
                    + "in place; persist the training RDD with a level that keeps it (e.g. MEMORY_AND_DISK), or "
                    + "set " + AveragingRounds.DEAL_IN_PLACE_MAX_WORKERS + "=0 to deal it with a shuffle", e);
        }
    }

    private static Partition[] byIndex(int n) {
        Partition[] out = new Partition[n];
        for (int i = 0; i < n; i++) {
            out[i] = new CachedBlocksRDD.ByIndex(i);
        }
        return out;
    }

    /** Forgets the parent's partitions once the fit's job is over. */
    void release() {
        PARENTS.remove(id());
    }

    /** A partition of this RDD: a worker. */
    private record Index(int index) implements Partition {
    }

    /** Child partition {@code w} depends on the parent partitions its objects are in. */
    private static final class SourceParents<T> extends NarrowDependency<T> {
        private static final long serialVersionUID = 1L;
        private final int[][] sources;

        SourceParents(RDD<T> rdd, int[][] sources) {
            super(rdd);
            this.sources = sources;
        }

        @Override
        @SuppressWarnings("unchecked")
        public List<Object> getParents(int partitionId) {
            List<Object> out = (List<Object>) (List<?>) Nil$.MODULE$;
            for (int i = sources[partitionId].length - 1; i >= 0; i--) {
                out = out.$colon$colon(sources[partitionId][i]);
            }
            return out;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> List<Dependency<?>> dependencies(RDD<Tuple2<Placed, T>> parent, int[][] sources) {
        List<Dependency<?>> none = (List<Dependency<?>>) (List<?>) Nil$.MODULE$;
        return none.$colon$colon(new SourceParents<>(parent, sources));
    }

    @SuppressWarnings("unchecked")
    private static <T> ClassTag<Tuple2<Placed, T>> tag() {
        return (ClassTag<Tuple2<Placed, T>>) (ClassTag<?>) ClassTag$.MODULE$.apply(Tuple2.class);
    }
}
