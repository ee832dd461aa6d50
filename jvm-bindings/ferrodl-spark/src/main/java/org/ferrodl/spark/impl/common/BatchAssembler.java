package org.ferrodl.spark.impl.common;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Turns a stream of DataSets (or MultiDataSets) of any sizes into minibatches of exactly
 * {@code batchSize} examples: small objects are merged, large ones split. Only the final minibatch
 * may be smaller (it holds what is left). Examples keep their order.
 *
 * @param <B> DataSet or MultiDataSet, as {@code kind} says
 */
public final class BatchAssembler<B> implements Iterator<B> {
    private final Iterator<B> source;
    private final int batchSize;
    private final NetworkKind<?, B> kind;
    private final List<B> pending = new ArrayList<>();
    private int pendingExamples;

    public BatchAssembler(Iterator<B> source, int batchSize, NetworkKind<?, B> kind) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batchSize must be positive, got " + batchSize);
        }
        this.source = source;
        this.batchSize = batchSize;
        this.kind = kind;
    }

    @Override
    public boolean hasNext() {
        fill();
        return pendingExamples > 0;
    }

    @Override
    public B next() {
        fill();
        if (pendingExamples == 0) {
            throw new NoSuchElementException();
        }
        B all = kind.merge(pending);
        pending.clear();
        pendingExamples = 0;
        int n = kind.numExamples(all);
        if (n <= batchSize) {
            return all;
        }
        B rest = kind.range(all, batchSize, n);
        pending.add(rest);
        pendingExamples = kind.numExamples(rest);
        return kind.range(all, 0, batchSize);
    }

    private void fill() {
        while (pendingExamples < batchSize && source.hasNext()) {
            B b = source.next();
            if (b == null || kind.numExamples(b) == 0) {
                continue; // empty objects carry nothing to train on
            }
            pending.add(b);
            pendingExamples += kind.numExamples(b);
        }
    }
}
