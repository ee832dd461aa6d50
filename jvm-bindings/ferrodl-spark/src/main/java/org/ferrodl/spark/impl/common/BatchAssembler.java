package org.ferrodl.spark.impl.common;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.ferrodl.linalg.dataset.DataSet;

/**
 * Turns a stream of DataSets of any sizes into minibatches of exactly {@code batchSize} examples:
 * small DataSets are merged, large ones split. Only the final minibatch may be smaller (it holds
 * what is left). Examples keep their order.
 */
public final class BatchAssembler implements Iterator<DataSet> {
    private final Iterator<DataSet> source;
    private final int batchSize;
    private final List<DataSet> pending = new ArrayList<>();
    private int pendingExamples;

    public BatchAssembler(Iterator<DataSet> source, int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batchSize must be positive, got " + batchSize);
        }
        this.source = source;
        this.batchSize = batchSize;
    }

    @Override
    public boolean hasNext() {
        fill();
        return pendingExamples > 0;
    }

    @Override
    public DataSet next() {
        fill();
        if (pendingExamples == 0) {
            throw new NoSuchElementException();
        }
        DataSet all = pending.size() == 1 ? pending.get(0) : DataSet.merge(pending);
        pending.clear();
        pendingExamples = 0;
        int n = all.numExamples();
        if (n <= batchSize) {
            return all;
        }
        DataSet rest = all.getRange(batchSize, n);
        pending.add(rest);
        pendingExamples = rest.numExamples();
        return all.getRange(0, batchSize);
    }

    private void fill() {
        while (pendingExamples < batchSize && source.hasNext()) {
            DataSet ds = source.next();
            if (ds == null || ds.numExamples() == 0) {
                continue; // empty DataSets carry nothing to train on
            }
            pending.add(ds);
            pendingExamples += ds.numExamples();
        }
    }
}
