package org.ferrodl.earlystopping.scorecalc;

import java.util.Objects;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.api.iterator.DataSetIterator;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/** A calculator that runs the network over a (resettable) iterator of held-out data. */
abstract class BaseIteratorScoreCalculator implements ScoreCalculator<MultiLayerNetwork> {
    private static final long serialVersionUID = 1L;

    protected final transient DataSetIterator iterator;

    BaseIteratorScoreCalculator(DataSetIterator iterator) {
        this.iterator = Objects.requireNonNull(iterator, "iterator");
    }

    /** Resets the iterator when it can be and feeds every minibatch to {@code each}. */
    protected void forEach(java.util.function.Consumer<DataSet> each) {
        if (iterator.resetSupported()) {
            iterator.reset();
        }
        if (!iterator.hasNext()) {
            throw new IllegalStateException(getClass().getSimpleName() + ": the score iterator holds no data "
                    + "(and cannot be reset)");
        }
        while (iterator.hasNext()) {
            each.accept(iterator.next());
        }
    }
}
