package org.ferrodl.spark.impl.evaluation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/**
 * The network output for each key: every value is one example's features ({@code [nIn]} or
 * {@code [1, nIn]}); examples are run together in minibatches of at most {@code batchSize} and
 * each key gets its {@code [1, nOut]} output row.
 */
public final class FeedForwardWithKeyFunction<K>
        implements PairFlatMapFunction<Iterator<Tuple2<K, INDArray>>, K, INDArray> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<NetworkSnapshot> snapshot;
    private final int batchSize;

    public FeedForwardWithKeyFunction(Broadcast<NetworkSnapshot> snapshot, int batchSize) {
        this.snapshot = snapshot;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Tuple2<K, INDArray>> call(Iterator<Tuple2<K, INDArray>> partition) {
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        TaskThreads.configure(1);
        List<Tuple2<K, INDArray>> out = new ArrayList<>();
        try (MultiLayerNetwork net = snapshot.value().restore()) {
            int nIn = net.numInputs();
            List<K> keys = new ArrayList<>(batchSize);
            List<INDArray> rows = new ArrayList<>(batchSize);
            while (partition.hasNext()) {
                Tuple2<K, INDArray> t = partition.next();
                INDArray f = t._2();
                boolean oneRow = f != null && f.length() == nIn
                        && (f.rank() == 1 || (f.rank() == 2 && f.size(0) == 1));
                if (!oneRow) {
                    throw new DL4JInvalidInputException("feedForwardWithKey needs one example of " + nIn
                            + " features per key ([" + nIn + "] or [1, " + nIn + "]); key " + t._1() + " has "
                            + (f == null ? "null" : "shape " + Arrays.toString(f.shape())));
                }
                keys.add(t._1());
                rows.add(f.rank() == 1 ? f.reshape(1, nIn) : f);
                if (rows.size() == batchSize || !partition.hasNext()) {
                    INDArray output = net.output(Nd4j.vstack(rows), false);
                    for (int i = 0; i < keys.size(); i++) {
                        out.add(new Tuple2<>(keys.get(i), output.getRow(i, true).dup()));
                    }
                    keys.clear();
                    rows.clear();
                }
            }
        }
        return out.iterator();
    }
}
