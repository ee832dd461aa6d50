package org.ferrodl.spark.impl.evaluation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/**
 * One score per key: every DataSet must hold exactly one example (so key and score correspond);
 * examples are scored together in minibatches of at most {@code batchSize}.
 */
public final class ScoreExamplesWithKeyFunction<K> implements PairFlatMapFunction<Iterator<Tuple2<K, DataSet>>, K, Double> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<NetworkSnapshot> snapshot;
    private final boolean addRegularization;
    private final int batchSize;

    public ScoreExamplesWithKeyFunction(Broadcast<NetworkSnapshot> snapshot, boolean addRegularization,
                                        int batchSize) {
        this.snapshot = snapshot;
        this.addRegularization = addRegularization;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Tuple2<K, Double>> call(Iterator<Tuple2<K, DataSet>> partition) {
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        TaskThreads.configure(1);
        List<Tuple2<K, Double>> out = new ArrayList<>();
        try (MultiLayerNetwork net = snapshot.value().restore()) {
            List<K> keys = new ArrayList<>(batchSize);
            List<DataSet> batch = new ArrayList<>(batchSize);
            while (partition.hasNext()) {
                Tuple2<K, DataSet> t = partition.next();
                int n = t._2() == null ? 0 : t._2().numExamples();
                if (n != 1) {
                    throw new DL4JInvalidInputException("scoreExamples with keys needs DataSets of exactly one "
                            + "example (one score per key); the DataSet of key " + t._1() + " holds " + n);
                }
                keys.add(t._1());
                batch.add(t._2());
                if (batch.size() == batchSize || !partition.hasNext()) {
                    float[] scores = net.scoreExamples(DataSet.merge(batch), addRegularization).toFloatVector();
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
