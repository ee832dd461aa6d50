package org.ferrodl.nn.info;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.nn.api.Layer;
import org.ferrodl.nn.conf.NeuralNetConfiguration;

/**
 * A read-only {@link Layer} that reads through to its network: parameters are fetched from the
 * engine on every call (so they are current and copies), the rest comes from the engine's layer
 * table. Shared by the network types; an internal class, not a user API.
 */
public final class LayerView implements Layer {
    private final NetworkInfo.LayerEntry e;
    private final Supplier<float[]> flatParams;
    private final Supplier<NeuralNetConfiguration> conf;

    /**
     * @param e the engine's description of the layer
     * @param flatParams returns the network's whole flat parameter vector (checking the network is
     *     open)
     * @param conf returns the layer's configuration
     */
    public LayerView(NetworkInfo.LayerEntry e, Supplier<float[]> flatParams, Supplier<NeuralNetConfiguration> conf) {
        this.e = e;
        this.flatParams = flatParams;
        this.conf = conf;
    }

    @Override
    public int getIndex() {
        return e.index;
    }

    @Override
    public Type type() {
        return typeOf(e.innerType);
    }

    @Override
    public String getLayerName() {
        return e.displayName();
    }

    @Override
    public String getLayerType() {
        return e.type;
    }

    @Override
    public boolean isFrozen() {
        return e.frozen;
    }

    @Override
    public NeuralNetConfiguration conf() {
        return conf.get();
    }

    @Override
    public long[] getInputShape() {
        return e.inputShape.clone();
    }

    @Override
    public long[] getOutputShape() {
        return e.outputShape.clone();
    }

    @Override
    public String getActivation() {
        return e.activation;
    }

    @Override
    public long numParams() {
        return e.numParams;
    }

    @Override
    public INDArray params() {
        float[] p = flatParams.get();
        int from = e.params.isEmpty() ? 0 : e.params.get(0).offset;
        return new NDArray(java.util.Arrays.copyOfRange(p, from, from + Math.toIntExact(e.numParams)), 1,
                e.numParams);
    }

    @Override
    public Map<String, INDArray> paramTable() {
        float[] p = flatParams.get();
        Map<String, INDArray> out = new LinkedHashMap<>();
        for (NetworkInfo.ParamEntry pe : e.params) {
            out.put(pe.name, pe.slice(p));
        }
        return out;
    }

    @Override
    public INDArray getParam(String param) {
        for (NetworkInfo.ParamEntry pe : e.params) {
            if (pe.name.equals(param)) {
                return pe.slice(flatParams.get());
            }
        }
        List<String> names = new ArrayList<>();
        for (NetworkInfo.ParamEntry pe : e.params) {
            names.add(pe.name);
        }
        throw new IllegalArgumentException("layer " + e.index + " (" + e.type + ") has no parameter \"" + param
                + "\"; its parameters are " + names);
    }

    @Override
    public String toString() {
        return "Layer(" + e.index + ", " + e.displayName() + ", " + e.type + ", params=" + e.numParams + ")";
    }

    /**
     * @param configType a layer's configuration type name
     * @return the reference's coarse layer type for it
     */
    public static Layer.Type typeOf(String configType) {
        switch (configType) {
            case "ConvolutionLayer":
            case "Convolution1DLayer":
            case "ZeroPaddingLayer":
                return Layer.Type.CONVOLUTIONAL;
            case "SubsamplingLayer":
            case "Subsampling1DLayer":
            case "GlobalPoolingLayer":
                return Layer.Type.SUBSAMPLING;
            case "Upsampling2D":
                return Layer.Type.UPSAMPLING;
            case "BatchNormalization":
                return Layer.Type.NORMALIZATION;
            default:
                return Layer.Type.FEED_FORWARD;
        }
    }
}
