package org.ferrodl.linalg.dataset.api.iterator;

import java.io.Serializable;
import java.util.Iterator;
import java.util.List;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.DataSetPreProcessor;

/**
 * An iterator over minibatches ({@link DataSet}s), resettable for multiple epochs.
 * Implementations are generally not thread-safe.
 */
public interface DataSetIterator extends Iterator<DataSet>, Serializable {

    /**
     * @param num number of examples
     * @return the next DataSet with up to {@code num} examples
     */
    DataSet next(int num);

    /** @return the number of feature columns */
    int inputColumns();

    /** @return the number of label columns (classes) */
    int totalOutcomes();

    /** @return whether {@link #reset()} is supported */
    boolean resetSupported();

    /** @return whether the iterator may be wrapped for asynchronous prefetching */
    boolean asyncSupported();

    /** Restarts the iteration from the first example. */
    void reset();

    /** @return the minibatch size */
    int batch();

    /** @param preProcessor applied to every returned DataSet, or null */
    void setPreProcessor(DataSetPreProcessor preProcessor);

    /** @return the pre-processor, or null */
    DataSetPreProcessor getPreProcessor();

    /** @return class labels, or null when unknown */
    default List<String> getLabels() {
        return null;
    }
}
