package org.ferrodl.spark.impl.evaluation;

import org.ferrodl.spark.impl.common.TaskThreads;
import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import scala.Tuple2;

/** Sums {@code score × examples} over a partition, in minibatches of at most {@code batchSize}. */
public final class ScoreFunction implements FlatMapFunction<Iterator<DataSet>, Tuple2<Double, Long>> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<NetworkSnapshot> snapshot;
    private final int batchSize;

    public ScoreFunction(Broadcast<NetworkSnapshot> snapshot, int batchSize) {
        this.snapshot = snapshot;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Tuple2<Double, Long>> call(Iterator<DataSet> partition) {
        TaskThreads.configure(1);
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        double sum = 0;
        long count = 0;
        try (MultiLayerNetwork net = snapshot.value().restore()) {
            BatchAssembler batches = new BatchAssembler(partition, batchSize);
            while (batches.hasNext()) {
                DataSet ds = batches.next();
                sum += net.score(ds) * ds.numExamples();
                count += ds.numExamples();
            }
        }
        return Collections.singletonList(new Tuple2<>(sum, count)).iterator();
    }
}
