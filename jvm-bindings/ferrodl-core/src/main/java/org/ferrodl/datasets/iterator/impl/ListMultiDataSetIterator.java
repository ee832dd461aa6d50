package org.ferrodl.datasets.iterator.impl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.NoSuchElementException;
import org.ferrodl.linalg.dataset.api.MultiDataSet;
import org.ferrodl.linalg.dataset.api.MultiDataSetPreProcessor;
import org.ferrodl.linalg.dataset.api.iterator.MultiDataSetIterator;

/**
 * Iterates over an in-memory list of MultiDataSets, merging consecutive elements into minibatches
 * of {@code batch} elements (each element usually holds one example); the MultiDataSet counterpart
 * of {@link ListDataSetIterator}. Returned MultiDataSets are copies, so a pre-processor never
 * modifies the list. Not thread-safe.
 */
public class ListMultiDataSetIterator implements MultiDataSetIterator {
    private static final long serialVersionUID = 1L;

    /** Elements per minibatch when none is given. */
    public static final int DEFAULT_BATCH = 5;

    private final List<MultiDataSet> list;
    private final int batch;
    private int cursor;
    private MultiDataSetPreProcessor preProcessor;

    /**
     * @param coll the MultiDataSets, iterated in order
     * @param batch elements merged into each minibatch (&gt; 0)
     */
    public ListMultiDataSetIterator(Collection<? extends MultiDataSet> coll, int batch) {
        if (coll == null) {
            throw new IllegalArgumentException("collection of MultiDataSets is null");
        }
        if (batch <= 0) {
            throw new IllegalArgumentException("batch must be > 0, got " + batch);
        }
        this.list = new ArrayList<>(coll);
        this.batch = batch;
    }

    /** @param coll the MultiDataSets, merged {@value #DEFAULT_BATCH} at a time */
    public ListMultiDataSetIterator(Collection<? extends MultiDataSet> coll) {
        this(coll, DEFAULT_BATCH);
    }

    @Override
    public boolean hasNext() {
        return cursor < list.size();
    }

    @Override
    public MultiDataSet next() {
        return next(batch);
    }

    @Override
    public MultiDataSet next(int num) {
        if (!hasNext()) {
            throw new NoSuchElementException("no more MultiDataSets (call reset() to start again)");
        }
        if (num <= 0) {
            throw new IllegalArgumentException("num must be > 0, got " + num);
        }
        int end = Math.min(list.size(), cursor + num);
        List<MultiDataSet> part = list.subList(cursor, end);
        cursor = end;
        MultiDataSet m = org.ferrodl.linalg.dataset.MultiDataSet.merge(part);
        if (preProcessor != null) {
            preProcessor.preProcess(m);
        }
        return m;
    }

    @Override
    public void setPreProcessor(MultiDataSetPreProcessor preProcessor) {
        this.preProcessor = preProcessor;
    }

    @Override
    public MultiDataSetPreProcessor getPreProcessor() {
        return preProcessor;
    }

    @Override
    public boolean resetSupported() {
        return true;
    }

    @Override
    public boolean asyncSupported() {
        return false;
    }

    @Override
    public void reset() {
        cursor = 0;
    }

    /** @return elements merged into each minibatch */
    public int batch() {
        return batch;
    }
}
