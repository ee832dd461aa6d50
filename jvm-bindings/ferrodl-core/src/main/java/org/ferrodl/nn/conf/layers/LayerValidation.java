package org.ferrodl.nn.conf.layers;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;

/**
 * Validation of a list of resolved layers and the shape of every layer's input and output (the
 * rules the native engine applies, docs/ARCHITECTURE.md §2), with optional inference of unset
 * {@code nIn} values. Used by {@code ListBuilder.build()} and {@code MultiLayerConfiguration.validate()}.
 */
public final class LayerValidation {
    private LayerValidation() {
    }

    /**
     * Checks the layers and returns the type of each layer's input followed by the network's
     * output type ({@code layers.size() + 1} entries).
     *
     * @param layers resolved layers (modified when {@code inferNIn})
     * @param inputType the network's input type, or null: feed-forward of the first layer's nIn
     *     (one column of indices for a first EmbeddingLayer)
     * @param inferNIn true: fill unset {@code nIn} (and BatchNormalization {@code nOut}) from the input
     * @return the input type of every layer, then the network's output type
     * @throws DL4JInvalidConfigException naming the layer index, type, name and the problem
     */
    public static List<InputType> activationTypes(List<Layer> layers, InputType inputType, boolean inferNIn) {
        if (layers.isEmpty()) {
            throw new DL4JInvalidConfigException("MultiLayerConfiguration has no layers: add at least one with "
                    + "list().layer(..) (the last layer must be an OutputLayer or LossLayer)");
        }
        InputType current = inputType != null ? checkInputType(inputType) : inferredInputType(layers.get(0));
        List<InputType> types = new ArrayList<>(layers.size() + 1);
        int last = layers.size() - 1;
        for (int i = 0; i < layers.size(); i++) {
            Layer l = layers.get(i);
            if (l == null) {
                throw new DL4JInvalidConfigException("layer " + i + " is null");
            }
            String who = l.describe(i);
            Layer inner = l instanceof FrozenLayer ? ((FrozenLayer) l).getLayer() : l;
            boolean output = inner instanceof LayerWithLoss;
            if (output && i != last) {
                throw Layer.invalid(who, "an " + inner.getClass().getSimpleName() + " must be the last layer, but "
                        + (last - i) + " more layer(s) follow it");
            }
            if (!output && i == last) {
                throw Layer.invalid(who, "the last layer must be an OutputLayer or LossLayer (it defines the loss "
                        + "function)");
            }
            if (inferNIn) {
                l.setNIn(current, false);
            }
            l.checkSettings(who);
            if (inner != l && inner != null) {
                inner.checkSettings(who);
            }
            String from = i == 0 ? null : layers.get(i - 1).describe(i - 1);
            InputType out = l.outputType(who, current, from);
            if (activation(inner) == Activation.SOFTMAX && out.arrayElementsPerExample() == 1) {
                throw Layer.invalid(who, "SOFTMAX activation with nOut=1 always outputs 1.0 and cannot learn; use "
                        + "SIGMOID for a single output or nOut >= 2");
            }
            types.add(current);
            current = out;
        }
        types.add(current);
        return types;
    }

    private static Activation activation(Layer l) {
        if (l instanceof BaseLayer) {
            return ((BaseLayer) l).getActivation();
        }
        if (l instanceof LossLayer) {
            return ((LossLayer) l).getActivation();
        }
        if (l instanceof ActivationLayer) {
            return ((ActivationLayer) l).getActivation();
        }
        return null;
    }

    private static InputType inferredInputType(Layer first) {
        Layer inner = first instanceof FrozenLayer ? ((FrozenLayer) first).getLayer() : first;
        String who = first.describe(0);
        if (inner instanceof EmbeddingLayer) {
            return InputType.feedForward(1);
        }
        if (inner instanceof FeedForwardLayer) {
            Long nIn = ((FeedForwardLayer) inner).getNIn();
            if (nIn == null) {
                throw Layer.invalid(who, "nIn is not set, so the input size is unknown; set it with .nIn(..) (the "
                        + "number of input features) or call setInputType(..)");
            }
            if (nIn <= 0) {
                throw Layer.invalid(who, "nIn is " + nIn + " (must be at least 1)");
            }
            return InputType.feedForward(nIn);
        }
        throw Layer.invalid(who, "the input size is unknown: call setInputType(..) (e.g. InputType.convolutional("
                + "height, width, channels) or InputType.feedForward(n))");
    }

    private static InputType checkInputType(InputType t) {
        boolean ok;
        if (t instanceof InputType.InputTypeFeedForward) {
            ok = ((InputType.InputTypeFeedForward) t).getSize() > 0;
        } else if (t instanceof InputType.InputTypeConvolutional) {
            InputType.InputTypeConvolutional c = (InputType.InputTypeConvolutional) t;
            ok = c.getHeight() > 0 && c.getWidth() > 0 && c.getChannels() > 0;
        } else if (t instanceof InputType.InputTypeConvolutionalFlat) {
            InputType.InputTypeConvolutionalFlat c = (InputType.InputTypeConvolutionalFlat) t;
            ok = c.getHeight() > 0 && c.getWidth() > 0 && c.getDepth() > 0;
        } else if (t instanceof InputType.InputTypeRecurrent) {
            InputType.InputTypeRecurrent r = (InputType.InputTypeRecurrent) t;
            if (r.getSize() > 0 && r.getTimeSeriesLength() == -1) {
                throw new DL4JInvalidConfigException("inputType " + t + ": the time series length is unknown; "
                        + "ferrodl needs it to size the layers (every example is one row of size·length values): "
                        + "use InputType.recurrent(size, timeSeriesLength)");
            }
            ok = r.getSize() > 0 && r.getTimeSeriesLength() > 0;
        } else {
            ok = false;
        }
        if (!ok) {
            throw new DL4JInvalidConfigException("inputType " + t + " is invalid: every dimension must be at least 1");
        }
        return t;
    }
}
