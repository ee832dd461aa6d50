package org.ferrodl.linalg.dataset.api.iterator;

import java.io.Serializable;
import java.util.Iterator;
import org.ferrodl.linalg.dataset.api.MultiDataSet;
import org.ferrodl.linalg.dataset.api.MultiDataSetPreProcessor;

/** Iterates over MultiDataSet minibatches (the input of a multi-input/multi-output network). */
public interface MultiDataSetIterator extends Iterator<MultiDataSet>, Serializable {

    /**
     * @param num number of examples in the returned MultiDataSet (the last one may be smaller)
     * @return the next minibatch
     */
    MultiDataSet next(int num);

    /** @param preProcessor applied to every MultiDataSet returned, or null */
    void setPreProcessor(MultiDataSetPreProcessor preProcessor);

    /** @return the pre-processor, or null */
    MultiDataSetPreProcessor getPreProcessor();

    /** @return whether {@link #reset()} is supported */
    boolean resetSupported();

    /** @return whether the iterator may be wrapped for asynchronous prefetching */
    boolean asyncSupported();

    /** Starts again from the first example. */
    void reset();
}
