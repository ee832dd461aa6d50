package org.ferrodl.linalg.lossfunctions.impl;

import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.lossfunctions.ILossFunction;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/** Shared state of the loss function objects: the computation and the optional output weights. */
public abstract class BaseLossFunction implements ILossFunction {
    private static final long serialVersionUID = 1L;

    private final LossFunction lossFunction;
    private final double[] weights;

    /**
     * @param lossFunction the computation
     * @param weights per-output weights (a row or column vector), or null
     */
    protected BaseLossFunction(LossFunction lossFunction, INDArray weights) {
        this.lossFunction = Objects.requireNonNull(lossFunction, "lossFunction");
        this.weights = weights == null ? null : toVector(getClass().getSimpleName(), weights);
    }

    private static double[] toVector(String who, INDArray w) {
        long[] shape = w.shape();
        long nonUnit = Arrays.stream(shape).filter(d -> d != 1).count();
        if (w.length() == 0 || nonUnit > 1) {
            throw new DL4JInvalidConfigException(who + ": the weights must be a vector with one value per output, "
                    + "got shape " + Arrays.toString(shape));
        }
        return w.toDoubleVector();
    }

    @Override
    public LossFunction getLossFunction() {
        return lossFunction;
    }

    @Override
    public double[] getWeights() {
        return weights == null ? null : weights.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && Arrays.equals(((BaseLossFunction) o).weights, weights);
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass().getSimpleName(), Arrays.hashCode(weights));
    }

    @Override
    public String toString() {
        return name() + (weights == null ? "()" : "(weights=" + Arrays.toString(weights) + ")");
    }
}
