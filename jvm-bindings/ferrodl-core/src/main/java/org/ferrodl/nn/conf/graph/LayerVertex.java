package org.ferrodl.nn.conf.graph;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;
import org.ferrodl.nn.conf.InputPreProcessor;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.Layer;

/**
 * A layer as a vertex, with an optional {@link InputPreProcessor} applied to its (single) input.
 * {@code GraphBuilder.addLayer(..)} creates these; the layer's name is the vertex name.
 */
@JsonPropertyOrder({"layer", "preProcessor"})
public class LayerVertex extends GraphVertex {
    private static final long serialVersionUID = 1L;

    private Layer layer;
    private InputPreProcessor preProcessor;

    /** For deserialization. */
    protected LayerVertex() {
    }

    /**
     * @param layer the layer configuration
     * @param preProcessor applied to the layer's input, or null
     */
    public LayerVertex(Layer layer, InputPreProcessor preProcessor) {
        this.layer = Objects.requireNonNull(layer, "layer");
        this.preProcessor = preProcessor;
    }

    /**
     * The reference's constructor.
     *
     * @param layerConf the per-layer configuration (its layer is used)
     * @param preProcessor applied to the layer's input, or null
     */
    public LayerVertex(NeuralNetConfiguration layerConf, InputPreProcessor preProcessor) {
        this(Objects.requireNonNull(layerConf, "layerConf").getLayer(), preProcessor);
    }

    /** @return the layer configuration (live) */
    public Layer getLayer() {
        return layer;
    }

    /** @return the preprocessor, or null */
    public InputPreProcessor getPreProcessor() {
        return preProcessor;
    }

    /** @param preProcessor the preprocessor applied to the layer's input, or null */
    public void setPreProcessor(InputPreProcessor preProcessor) {
        this.preProcessor = preProcessor;
    }

    @Override
    public LayerVertex clone() {
        LayerVertex v = (LayerVertex) super.clone();
        v.layer = layer == null ? null : layer.clone();
        v.preProcessor = preProcessor == null ? null : preProcessor.clone();
        return v;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof LayerVertex)) {
            return false;
        }
        LayerVertex v = (LayerVertex) o;
        return Objects.equals(layer, v.layer) && Objects.equals(preProcessor, v.preProcessor);
    }

    @Override
    public int hashCode() {
        return Objects.hash("LayerVertex", layer, preProcessor);
    }

    @Override
    public String toString() {
        return "LayerVertex(" + (layer == null ? null : layer.getClass().getSimpleName())
                + (preProcessor == null ? "" : ", " + preProcessor) + ")";
    }
}
