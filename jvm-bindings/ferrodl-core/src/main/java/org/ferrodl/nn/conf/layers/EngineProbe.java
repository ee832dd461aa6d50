package org.ferrodl.nn.conf.layers;

import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;

/**
 * Answers the per-layer questions of {@link Layer#getOutputType(int, InputType)} and
 * {@link Layer#setNIn(InputType, boolean)} by asking the engine about a one-layer network (followed
 * by an identity LossLayer, which takes any input, unless the layer is itself an output layer). So
 * the shape rules stay in the engine only.
 */
final class EngineProbe {
    private EngineProbe() {
    }

    private static MultiLayerConfiguration probe(Layer layer, InputType in) {
        NeuralNetConfiguration.ListBuilder lb = new NeuralNetConfiguration.Builder().seed(0).list().layer(layer);
        Layer inner = LayerWrappers.innermost(layer);
        if (!(inner instanceof LayerWithLoss)) {
            lb.layer(new LossLayer.Builder(LossFunctions.LossFunction.MSE).activation(Activation.IDENTITY).build());
        }
        return lb.setInputType(in).build();
    }

    static InputType outputType(Layer layer, int layerIndex, InputType in) {
        try {
            return probe(layer.clone(), in).getLayerActivationTypes().get(0);
        } catch (DL4JInvalidConfigException e) {
            // The probe network holds the layer at index 0; name it as the caller does.
            String m = e.getMessage();
            if (layerIndex != 0 && m != null) {
                m = m.replace("layer 0 (", "layer " + layerIndex + " (");
            }
            throw new DL4JInvalidConfigException(m, e);
        }
    }

    static void setNIn(Layer layer, InputType in, boolean override) {
        FeedForwardLayer target = sized(layer);
        if (target == null) {
            return;
        }
        Layer copy = layer.clone();
        FeedForwardLayer copyTarget = sized(copy);
        if (override) {
            copyTarget.setNIn((Long) null);
            if (copyTarget instanceof BatchNormalization) {
                copyTarget.setNOut(null);
            }
        }
        FeedForwardLayer inferred;
        try {
            inferred = sized(probe(copy, in).getLayers().get(0));
        } catch (DL4JInvalidConfigException e) {
            return; // an input this layer cannot take: nothing to infer; build() reports it
        }
        if (target.getNIn() == null || override) {
            target.setNIn(inferred.getNIn());
        }
        if (target instanceof BatchNormalization && (target.getNOut() == null || override)) {
            target.setNOut(inferred.getNOut());
        }
    }

    /** The layer with sizes inside a (possibly frozen) layer, or null. */
    private static FeedForwardLayer sized(Layer l) {
        Layer inner = LayerWrappers.innermost(l);
        return inner instanceof FeedForwardLayer ? (FeedForwardLayer) inner : null;
    }
}
