package org.ferrodl.spark.impl.evaluation;

import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.nn.api.RecurrentArrays;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.impl.common.BatchAssembler;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/**
 * Evaluates one partition with every given evaluation in one pass: rebuilds the network once
 * (holding one of the executor's evaluation-worker slots meanwhile), runs inference on
 * minibatches of at most {@code batchSize} examples and feeds output {@code outputIndex} (with its
 * labels and labels mask) to the evaluations. Spark gives each task its own deserialized copy of
 * the (empty) evaluations, so they can be filled in place. An empty partition returns them empty,
 * which merges as a no-op. Each result carries the number of examples evaluated.
 *
 * @param <N> the network type
 * @param <B> its minibatch type
 */
public final class IEvaluateFunction<N extends NativeHandleOwner & Model, B>
        implements FlatMapFunction<Iterator<B>, Tuple2<Long, IEvaluation<?>[]>> {
    private static final long serialVersionUID = 2L;

    private final Broadcast<NetworkSnapshot<N>> snapshot;
    private final NetworkKind<N, B> kind;
    private final int outputIndex;
    private final int batchSize;
    private final int evaluationWorkers;
    private final IEvaluation<?>[] evaluations;

    public IEvaluateFunction(Broadcast<NetworkSnapshot<N>> snapshot, NetworkKind<N, B> kind, int outputIndex,
                             int batchSize, int evaluationWorkers, IEvaluation<?>[] emptyEvaluations) {
        this.snapshot = snapshot;
        this.kind = kind;
        this.outputIndex = outputIndex;
        this.batchSize = batchSize;
        this.evaluationWorkers = evaluationWorkers;
        this.evaluations = emptyEvaluations;
    }

    @Override
    public Iterator<Tuple2<Long, IEvaluation<?>[]>> call(Iterator<B> partition) {
        long examples = 0;
        if (!partition.hasNext()) {
            return Collections.singletonList(new Tuple2<Long, IEvaluation<?>[]>(examples, evaluations)).iterator();
        }
        try (EvaluationWorkers.Slot slot = EvaluationWorkers.acquire(evaluationWorkers)) {
            TaskThreads.configure(1);
            try (N net = snapshot.value().restore()) {
                BatchAssembler<B> batches = new BatchAssembler<>(partition, batchSize, kind);
                while (batches.hasNext()) {
                    B ds = batches.next();
                    examples += kind.numExamples(ds);
                    INDArray out = kind.output(net, kind.features(ds), kind.featureMasks(ds))[outputIndex];
                    INDArray[] masks = kind.labelMasks(ds);
                    INDArray mask = masks == null ? null : masks[outputIndex];
                    for (IEvaluation<?> e : evaluations) {
                        RecurrentArrays.eval(e, kind.labels(ds)[outputIndex], out, mask,
                                kind.outputFormat(net, outputIndex));
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
