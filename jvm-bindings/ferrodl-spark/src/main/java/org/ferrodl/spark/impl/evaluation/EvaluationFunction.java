package org.ferrodl.spark.impl.evaluation;

import org.ferrodl.spark.impl.common.TaskThreads;
import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkSnapshot;

/**
 * Evaluates one partition: rebuilds the network once, runs inference on minibatches of at most
 * {@code batchSize} examples and returns one {@link Evaluation} (an empty partition returns an
 * empty one, which merges as a no-op).
 */
public final class EvaluationFunction implements FlatMapFunction<Iterator<DataSet>, Evaluation> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<NetworkSnapshot> snapshot;
    private final int batchSize;

    public EvaluationFunction(Broadcast<NetworkSnapshot> snapshot, int batchSize) {
        this.snapshot = snapshot;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Evaluation> call(Iterator<DataSet> partition) {
        TaskThreads.configure(1);
        Evaluation eval = new Evaluation();
        if (!partition.hasNext()) {
            return Collections.singletonList(eval).iterator();
        }
        try (MultiLayerNetwork net = snapshot.value().restore()) {
            BatchAssembler batches = new BatchAssembler(partition, batchSize);
            while (batches.hasNext()) {
                DataSet ds = batches.next();
                INDArray out = net.output(ds.getFeatures(), false);
                eval.eval(ds.getLabels(), out, ds.getLabelsMaskArray());
            }
        }
        return Collections.singletonList(eval).iterator();
    }
}
