package org.ferrodl.nn.api;

import java.util.Map;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.nn.conf.NeuralNetConfiguration;

/**
 * A read-only view of one layer of an initialized network
 * ({@link org.ferrodl.nn.multilayer.MultiLayerNetwork#getLayer(int)}). The layer itself lives in the
 * native engine; the view reads through to it, so {@link #params()} always reflects the current
 * parameters, and every method that touches the network throws
 * {@link org.ferrodl.exception.NativeStateException} once the network is closed.
 */
public interface Layer {

    /** The kind of computation a layer performs (the reference's classification). */
    enum Type {
        FEED_FORWARD, RECURRENT, CONVOLUTIONAL, CONVOLUTIONAL3D, SUBSAMPLING, UPSAMPLING, RECURSIVE, MULTILAYER,
        NORMALIZATION
    }

    /** @return the position of this layer in the network (0 = first) */
    int getIndex();

    /** @return the kind of layer (a frozen layer reports the kind of the layer it wraps) */
    Type type();

    /**
     * @return the layer's name: the configured one, or {@code "layer" + index} when none was set
     */
    String getLayerName();

    /**
     * @return the configuration type name, e.g. {@code "DenseLayer"}, {@code "OutputLayer"},
     *     {@code "FrozenLayer"}
     */
    String getLayerType();

    /** @return whether the layer is frozen (its parameters never change) */
    boolean isFrozen();

    /** @return the configuration of this layer (of the owning network; do not modify it) */
    NeuralNetConfiguration conf();

    /**
     * @return the per-example input shape: {@code [n]} feed-forward, {@code [C, H, W]}
     *     convolutional, {@code [C, L]} recurrent (a copy)
     */
    long[] getInputShape();

    /** @return the per-example output shape, as {@link #getInputShape()} (a copy) */
    long[] getOutputShape();

    /** @return the activation function's name (e.g. {@code "RELU"}), or null for layers without one */
    String getActivation();

    /** @return the number of parameters of this layer */
    long numParams();

    /**
     * @return a copy of this layer's parameters, flat, shape {@code [1, numParams]} (an empty
     *     {@code [1, 0]} array for a layer without parameters)
     */
    INDArray params();

    /**
     * @return a copy of each parameter of this layer by its key within the layer ({@code "W"},
     *     {@code "b"}, {@code "gamma"}, ...), in layout order, shaped as the network's
     *     {@code paramTable()} shapes them
     */
    Map<String, INDArray> paramTable();

    /**
     * @param param a key of {@link #paramTable()}
     * @return a copy of that parameter
     * @throws IllegalArgumentException for an unknown key
     */
    INDArray getParam(String param);
}
