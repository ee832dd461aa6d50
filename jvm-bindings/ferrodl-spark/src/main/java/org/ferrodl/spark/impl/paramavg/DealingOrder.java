package org.ferrodl.spark.impl.paramavg;

import java.io.Serializable;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;

/**
 * The dealing position of every object of a fit (index in RDD order → position), as the tasks that
 * place the objects read it. A small order travels inside the tasks themselves (their binary is
 * one broadcast that every task reads anyway); a large one is broadcast once per fit. Reading a
 * broadcast of its own cost a task 24–84 ms on the bench's 2-worker cluster whatever its size
 * (BENCHMARKS.md, 2026-11-28), for 1 KB of positions.
 */
final class DealingOrder implements Serializable {
    private static final long serialVersionUID = 1L;
    /** The most positions carried inside the tasks (256 KiB); beyond, a broadcast. */
    static final int INLINE_MAX = 1 << 16;

    private final int[] inline;
    private final Broadcast<int[]> broadcast;

    private DealingOrder(int[] inline, Broadcast<int[]> broadcast) {
        this.inline = inline;
        this.broadcast = broadcast;
    }

    /** The order {@code positions}, or null for none (RDD order). */
    static DealingOrder of(JavaSparkContext sc, int[] positions) {
        if (positions == null) {
            return null;
        }
        return positions.length <= INLINE_MAX ? new DealingOrder(positions, null)
                : new DealingOrder(null, sc.broadcast(positions));
    }

    /** The position of the object at {@code index} in RDD order. */
    int positionOf(long index) {
        return (inline != null ? inline : broadcast.value())[(int) index];
    }

    /** Releases the broadcast, if any (the fit is over). */
    void destroy() {
        if (broadcast != null) {
            broadcast.destroy();
        }
    }
}
