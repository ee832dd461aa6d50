package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * A layer that ends the network with a loss function: {@link OutputLayer} and {@link LossLayer}.
 * It must be the last layer.
 */
public interface LayerWithLoss {

    /** @return the loss function, or null when unset */
    LossFunction getLossFunction();

    /** @return a copy of the per-output loss weights, or null for unweighted */
    double[] getLossWeights();

    /** Checks loss weights: one finite value {@code >= 0} per output. */
    static void checkLossWeights(String who, double[] w, long nOut) {
        if (w == null) {
            return;
        }
        if (w.length != nOut) {
            throw Layer.invalid(who, "lossWeights has " + w.length + " values but the layer has " + nOut
                    + " outputs");
        }
        for (double v : w) {
            if (!(Double.isFinite(v) && v >= 0)) {
                throw Layer.invalid(who, "lossWeights contains " + v + " (weights must be finite numbers >= 0): "
                        + Arrays.toString(w));
            }
        }
    }
}
