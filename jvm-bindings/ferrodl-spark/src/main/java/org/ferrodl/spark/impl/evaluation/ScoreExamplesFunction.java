package org.ferrodl.spark.impl.evaluation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.DoubleFlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;

/**
 * The score of every example of a partition, in order, computed in minibatches of at most
 * {@code batchSize} with {@link MultiLayerNetwork#scoreExamples(DataSet, boolean)}.
 */
public final class ScoreExamplesFunction implements DoubleFlatMapFunction<Iterator<DataSet>> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<NetworkSnapshot> snapshot;
    private final boolean addRegularization;
    private final int batchSize;

    public ScoreExamplesFunction(Broadcast<NetworkSnapshot> snapshot, boolean addRegularization, int batchSize) {
        this.snapshot = snapshot;
        this.addRegularization = addRegularization;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Double> call(Iterator<DataSet> partition) {
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        TaskThreads.configure(1);
        List<Double> out = new ArrayList<>();
        try (MultiLayerNetwork net = snapshot.value().restore()) {
            BatchAssembler batches = new BatchAssembler(partition, batchSize);
            while (batches.hasNext()) {
                for (float s : net.scoreExamples(batches.next(), addRegularization).toFloatVector()) {
                    out.add((double) s);
                }
            }
        }
        return out.iterator();
    }
}
