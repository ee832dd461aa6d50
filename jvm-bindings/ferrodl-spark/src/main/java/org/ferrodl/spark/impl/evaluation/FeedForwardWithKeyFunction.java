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
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.spark.impl.common.TaskThreads;
import scala.Tuple2;

/**
 * The network outputs for each key: every value is one example's features, one array per network
 * input ({@code [width]} or {@code [1, width]}), with optional feature masks (null, or one entry
 * per input, null entries allowed); examples are run together in minibatches of at most
 * {@code batchSize} and each key gets one {@code [1, nOut]} row per network output.
 */
public final class FeedForwardWithKeyFunction<K, N extends NativeHandleOwner & Model>
        implements PairFlatMapFunction<Iterator<Tuple2<K, Tuple2<INDArray[], INDArray[]>>>, K, INDArray[]> {
    private static final long serialVersionUID = 2L;

    private final Broadcast<NetworkSnapshot<N>> snapshot;
    private final NetworkKind<N, ?> kind;
    private final int batchSize;

    public FeedForwardWithKeyFunction(Broadcast<NetworkSnapshot<N>> snapshot, NetworkKind<N, ?> kind, int batchSize) {
        this.snapshot = snapshot;
        this.kind = kind;
        this.batchSize = batchSize;
    }

    @Override
    public Iterator<Tuple2<K, INDArray[]>> call(Iterator<Tuple2<K, Tuple2<INDArray[], INDArray[]>>> partition) {
        if (!partition.hasNext()) {
            return Collections.emptyIterator();
        }
        TaskThreads.configure(1);
        List<Tuple2<K, INDArray[]>> out = new ArrayList<>();
        try (N net = snapshot.value().restore()) {
            long[] widths = kind.inputWidths(net);
            int inputs = widths.length;
            List<K> keys = new ArrayList<>(batchSize);
            List<INDArray[]> rows = new ArrayList<>(batchSize);
            List<INDArray[]> maskRows = new ArrayList<>(batchSize);
            boolean anyMask = false;
            while (partition.hasNext()) {
                Tuple2<K, Tuple2<INDArray[], INDArray[]>> t = partition.next();
                INDArray[] f = t._2() == null ? null : t._2()._1();
                INDArray[] m = t._2() == null ? null : t._2()._2();
                if (f == null || f.length != inputs) {
                    throw new DL4JInvalidInputException("feedForwardWithKey needs one features array per network "
                            + "input (" + inputs + ") for each key; key " + t._1() + " has "
                            + (f == null ? "none" : f.length));
                }
                if (m != null && m.length != inputs) {
                    throw new DL4JInvalidInputException("feedForwardWithKey: key " + t._1() + " has " + m.length
                            + " feature masks but the network has " + inputs + " inputs");
                }
                INDArray[] row = new INDArray[inputs];
                for (int k = 0; k < inputs; k++) {
                    row[k] = oneRow(f[k], widths[k], t._1(), "features", k, inputs);
                }
                keys.add(t._1());
                rows.add(row);
                maskRows.add(m);
                anyMask |= m != null;
                if (rows.size() == batchSize || !partition.hasNext()) {
                    INDArray[] features = new INDArray[inputs];
                    for (int k = 0; k < inputs; k++) {
                        final int input = k;
                        features[k] = Nd4j.vstack(rows.stream().map(r -> r[input]).toArray(INDArray[]::new));
                    }
                    INDArray[] output = kind.output(net, features, anyMask ? stackMasks(keys, maskRows, inputs) : null);
                    for (int i = 0; i < keys.size(); i++) {
                        INDArray[] mine = new INDArray[output.length];
                        for (int k = 0; k < output.length; k++) {
                            mine[k] = output[k].getRow(i, true).dup();
                        }
                        out.add(new Tuple2<>(keys.get(i), mine));
                    }
                    keys.clear();
                    rows.clear();
                    maskRows.clear();
                    anyMask = false;
                }
            }
        }
        return out.iterator();
    }

    private static INDArray oneRow(INDArray a, long width, Object key, String what, int k, int inputs) {
        boolean ok = a != null && (width <= 0 || a.length() == width)
                && (a.rank() == 1 || a.size(0) == 1);
        if (!ok) {
            String which = inputs == 1 ? "" : " for input " + k;
            throw new DL4JInvalidInputException("feedForwardWithKey needs one example of " + width + " " + what
                    + which + " per key ([" + width + "] or [1, " + width + "]); key " + key + " has "
                    + (a == null ? "null" : "shape " + Arrays.toString(a.shape())));
        }
        return a.rank() == 1 ? a.reshape(1, a.length()) : a;
    }

    /** Masks stacked per input; an input that no key masks gets none, a key without a mask all ones. */
    private static INDArray[] stackMasks(List<?> keys, List<INDArray[]> maskRows, int inputs) {
        INDArray[] masks = new INDArray[inputs];
        for (int k = 0; k < inputs; k++) {
            long cols = -1;
            for (INDArray[] m : maskRows) {
                if (m != null && m[k] != null) {
                    cols = m[k].rank() == 1 ? m[k].length() : m[k].size(1);
                    break;
                }
            }
            if (cols < 0) {
                continue;
            }
            INDArray[] rows = new INDArray[maskRows.size()];
            for (int i = 0; i < rows.length; i++) {
                INDArray[] m = maskRows.get(i);
                rows[i] = m == null || m[k] == null ? Nd4j.ones(1, cols)
                        : oneRow(m[k], cols, keys.get(i), "mask values", k, inputs);
            }
            masks[k] = Nd4j.vstack(rows);
        }
        return masks;
    }
}
