package org.ferrodl.spark.impl.evaluation;

import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/** Sums {@code score × examples} over a partition, in minibatches of at most {@code batchSize}. */
public final class ScoreFunction<N extends NativeHandleOwner & Model, B>
        implements FlatMapFunction<Iterator<B>, Tuple2<Double, Long>> {
    private static final long serialVersionUID = 2L;

    private final Broadcast<NetworkSnapshot<N>> snapshot;
    private final NetworkKind<N, B> kind;
    private final int batchSize;

    public ScoreFunction(Broadcast<NetworkSnapshot<N>> snapshot, NetworkKind<N, B> kind, int batchSize) {
        this.snapshot = snapshot;
        this.kind = kind;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Tuple2<Double, Long>> call(Iterator<B> partition) {
        TaskThreads.configure(1);
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        double sum = 0;
        long count = 0;
        try (N net = snapshot.value().restore()) {
            BatchAssembler<B> batches = new BatchAssembler<>(partition, batchSize, kind);
            while (batches.hasNext()) {
                B ds = batches.next();
                int n = kind.numExamples(ds);
                sum += kind.score(net, ds) * n;
                count += n;
            }
        }
        return Collections.singletonList(new Tuple2<>(sum, count)).iterator();
    }
}
