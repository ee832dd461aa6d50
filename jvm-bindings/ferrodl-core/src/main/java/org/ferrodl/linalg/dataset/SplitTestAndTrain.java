package org.ferrodl.linalg.dataset;

import java.io.Serializable;

/**
 * A DataSet split into a training part and a test part.
 */
public class SplitTestAndTrain implements Serializable {
    private static final long serialVersionUID = 1L;

    private final DataSet train;
    private final DataSet test;

    /**
     * @param train training part
     * @param test test part
     */
    public SplitTestAndTrain(DataSet train, DataSet test) {
        this.train = train;
        this.test = test;
    }

    /** @return the training part */
    public DataSet getTrain() {
        return train;
    }

    /** @return the test part */
    public DataSet getTest() {
        return test;
    }
}
