package org.ferrodl.spark.impl.evaluation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.DoubleFlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;

/**
 * The score of every example of a partition, in order, computed in minibatches of at most
 * {@code batchSize} with the network's {@code scoreExamples}.
 */
public final class ScoreExamplesFunction<N extends NativeHandleOwner & Model, B>
        implements DoubleFlatMapFunction<Iterator<B>> {
    private static final long serialVersionUID = 2L;

    private final Broadcast<NetworkSnapshot<N>> snapshot;
    private final NetworkKind<N, B> kind;
    private final boolean addRegularization;
    private final int batchSize;

    public ScoreExamplesFunction(Broadcast<NetworkSnapshot<N>> snapshot, NetworkKind<N, B> kind,
                                 boolean addRegularization, int batchSize) {
        this.snapshot = snapshot;
        this.kind = kind;
        this.addRegularization = addRegularization;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Double> call(Iterator<B> partition) {
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        TaskThreads.configure(1);
        List<Double> out = new ArrayList<>();
        try (N net = snapshot.value().restore()) {
            BatchAssembler<B> batches = new BatchAssembler<>(partition, batchSize, kind);
            while (batches.hasNext()) {
                for (float s : kind.scoreExamples(net, batches.next(), addRegularization).toFloatVector()) {
                    out.add((double) s);
                }
            }
        }
        return out.iterator();
    }
}
