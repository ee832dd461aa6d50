package org.ferrodl.spark.impl.evaluation;

import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/**
 * Evaluates one partition with every given evaluation in one pass: rebuilds the network once
 * (holding one of the executor's evaluation-worker slots meanwhile), runs inference on
 * minibatches of at most {@code batchSize} examples and returns the evaluations. Spark gives each
 * task its own deserialized copy of the (empty) evaluations, so they can be filled in place. An
 * empty partition returns them empty, which merges as a no-op. Each result carries the number
 * of examples evaluated.
 */
public final class IEvaluateFunction implements FlatMapFunction<Iterator<DataSet>, Tuple2<Long, IEvaluation<?>[]>> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<NetworkSnapshot> snapshot;
    private final int batchSize;
    private final int evaluationWorkers;
    private final IEvaluation<?>[] evaluations;

    public IEvaluateFunction(Broadcast<NetworkSnapshot> snapshot, int batchSize, int evaluationWorkers,
                             IEvaluation<?>[] emptyEvaluations) {
        this.snapshot = snapshot;
        this.batchSize = batchSize;
        this.evaluationWorkers = evaluationWorkers;
        this.evaluations = emptyEvaluations;
    }

    @Override
    public Iterator<Tuple2<Long, IEvaluation<?>[]>> call(Iterator<DataSet> partition) {
        long examples = 0;
        if (!partition.hasNext()) {
            return Collections.singletonList(new Tuple2<Long, IEvaluation<?>[]>(examples, evaluations)).iterator();
        }
        try (EvaluationWorkers.Slot slot = EvaluationWorkers.acquire(evaluationWorkers)) {
            TaskThreads.configure(1);
            try (MultiLayerNetwork net = snapshot.value().restore()) {
                BatchAssembler batches = new BatchAssembler(partition, batchSize);
                while (batches.hasNext()) {
                    DataSet ds = batches.next();
                    examples += ds.numExamples();
                    INDArray out = net.output(ds.getFeatures(), false);
                    for (IEvaluation<?> e : evaluations) {
                        e.eval(ds.getLabels(), out, ds.getLabelsMaskArray());
                    }
                }
            }
        }
        return Collections.singletonList(new Tuple2<Long, IEvaluation<?>[]>(examples, evaluations)).iterator();
    }

    /** Merges {@code b} into {@code a} element-wise and returns {@code a}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static IEvaluation<?>[] merge(IEvaluation<?>[] a, IEvaluation<?>[] b) {
        for (int i = 0; i < a.length; i++) {
            ((IEvaluation) a[i]).merge(b[i]);
        }
        return a;
    }
}
