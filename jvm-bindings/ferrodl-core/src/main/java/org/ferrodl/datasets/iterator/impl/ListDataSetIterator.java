package org.ferrodl.datasets.iterator.impl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.NoSuchElementException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.DataSetPreProcessor;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Iterates over a list of DataSets, merging {@code batch} consecutive list entries into each
 * returned minibatch (with one-example entries, as from {@link DataSet#asList()}, each minibatch
 * then has {@code batch} examples). The list is not copied. Not thread-safe.
 */
public class ListDataSetIterator implements DataSetIterator {
    private static final long serialVersionUID = 1L;

    /** Default number of list entries per minibatch, as in the reference. */
    public static final int DEFAULT_BATCH = 5;

    private final List<DataSet> list;
    private final int batch;
    private int cursor;
    private DataSetPreProcessor preProcessor;

    /**
     * @param coll the DataSets
     * @param batch list entries merged per minibatch (&gt; 0)
     */
    public ListDataSetIterator(Collection<DataSet> coll, int batch) {
        if (batch <= 0) {
            throw new IllegalArgumentException("batch must be > 0, got " + batch);
        }
        this.list = coll instanceof List ? (List<DataSet>) coll : new ArrayList<>(coll);
        this.batch = batch;
    }

    /** @param coll the DataSets; {@value #DEFAULT_BATCH} entries per minibatch */
    public ListDataSetIterator(Collection<DataSet> coll) {
        this(coll, DEFAULT_BATCH);
    }

    @Override
    public boolean hasNext() {
        return cursor < list.size();
    }

    @Override
    public DataSet next() {
        return next(batch);
    }

    @Override
    public DataSet next(int num) {
        if (!hasNext()) {
            throw new NoSuchElementException("no more DataSets (call reset() to start again)");
        }
        int end = Math.min(list.size(), cursor + num);
        List<DataSet> part = list.subList(cursor, end);
        cursor = end;
        DataSet ds = part.size() == 1 ? part.get(0).copy() : DataSet.merge(part);
        if (preProcessor != null) {
            preProcessor.preProcess(ds);
        }
        return ds;
    }

    @Override
    public int inputColumns() {
        return list.isEmpty() ? 0 : (int) list.get(0).getFeatures().size(1);
    }

    @Override
    public int totalOutcomes() {
        return list.isEmpty() ? 0 : (int) list.get(0).getLabels().size(1);
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

    @Override
    public int batch() {
        return batch;
    }

    @Override
    public void setPreProcessor(DataSetPreProcessor preProcessor) {
        this.preProcessor = preProcessor;
    }

    @Override
    public DataSetPreProcessor getPreProcessor() {
        return preProcessor;
    }
}
