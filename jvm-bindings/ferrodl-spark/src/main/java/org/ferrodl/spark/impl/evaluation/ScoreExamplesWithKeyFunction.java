package org.ferrodl.spark.impl.evaluation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/**
 * One score per key: every DataSet (MultiDataSet) must hold exactly one example (so key and score
 * correspond); examples are scored together in minibatches of at most {@code batchSize}.
 */
public final class ScoreExamplesWithKeyFunction<K, N extends NativeHandleOwner & Model, B>
        implements PairFlatMapFunction<Iterator<Tuple2<K, B>>, K, Double> {
    private static final long serialVersionUID = 2L;

    private final Broadcast<NetworkSnapshot<N>> snapshot;
    private final NetworkKind<N, B> kind;
    private final boolean addRegularization;
    private final int batchSize;

    public ScoreExamplesWithKeyFunction(Broadcast<NetworkSnapshot<N>> snapshot, NetworkKind<N, B> kind,
                                        boolean addRegularization, int batchSize) {
        this.snapshot = snapshot;
        this.kind = kind;
        this.addRegularization = addRegularization;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Tuple2<K, Double>> call(Iterator<Tuple2<K, B>> partition) {
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        TaskThreads.configure(1);
        List<Tuple2<K, Double>> out = new ArrayList<>();
        try (N net = snapshot.value().restore()) {
            List<K> keys = new ArrayList<>(batchSize);
            List<B> batch = new ArrayList<>(batchSize);
            while (partition.hasNext()) {
                Tuple2<K, B> t = partition.next();
                int n = t._2() == null ? 0 : kind.numExamples(t._2());
                if (n != 1) {
                    throw new DL4JInvalidInputException("scoreExamples with keys needs " + kind.batchName()
                            + "s of exactly one example (one score per key); the " + kind.batchName() + " of key "
                            + t._1() + " holds " + n);
                }
                keys.add(t._1());
                batch.add(t._2());
                if (batch.size() == batchSize || !partition.hasNext()) {
                    float[] scores = kind.scoreExamples(net, kind.merge(batch), addRegularization).toFloatVector();
                    for (int i = 0; i < scores.length; i++) {
                        out.add(new Tuple2<>(keys.get(i), (double) scores[i]));
                    }
                    keys.clear();
                    batch.clear();
                }
            }
        }
        return out.iterator();
    }
}
