package org.ferrodl.linalg.dataset.adapter;

import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.dataset.api.MultiDataSetPreProcessor;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.linalg.dataset.api.iterator.MultiDataSetIterator;

/**
 * Presents a {@link DataSetIterator} as a {@link MultiDataSetIterator}: each DataSet becomes a
 * MultiDataSet with one features and one labels array (and its masks), sharing the arrays. The
 * wrapped iterator's own pre-processor still runs first; this adapter's runs on the MultiDataSet.
 */
public class MultiDataSetIteratorAdapter implements MultiDataSetIterator {
    private static final long serialVersionUID = 1L;

    private final DataSetIterator iterator;
    private MultiDataSetPreProcessor preProcessor;

    /** @param iterator the DataSet iterator to adapt */
    public MultiDataSetIteratorAdapter(DataSetIterator iterator) {
        if (iterator == null) {
            throw new IllegalArgumentException("DataSetIterator is null");
        }
        this.iterator = iterator;
    }

    @Override
    public boolean hasNext() {
        return iterator.hasNext();
    }

    @Override
    public MultiDataSet next() {
        return convert(iterator.next());
    }

    @Override
    public MultiDataSet next(int num) {
        return convert(iterator.next(num));
    }

    private MultiDataSet convert(DataSet ds) {
        MultiDataSet m = MultiDataSet.fromDataSet(ds);
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
        return iterator.resetSupported();
    }

    @Override
    public boolean asyncSupported() {
        return iterator.asyncSupported();
    }

    @Override
    public void reset() {
        iterator.reset();
    }
}
