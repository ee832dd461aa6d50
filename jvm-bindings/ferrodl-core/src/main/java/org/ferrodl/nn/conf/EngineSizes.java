package org.ferrodl.nn.conf;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.serde.JsonMappers;

/**
 * Takes the sizes the engine inferred ({@code NativeConfiguration.resolveMultiLayer}/
 * {@code resolveGraph}) back into the Java layer objects. Only values the user left unset (null or
 * 0) are filled; nothing here knows a shape rule, it copies the engine's answer.
 */
final class EngineSizes {
    private EngineSizes() {
    }

    static JsonNode parse(String engineJson) {
        try {
            return JsonMappers.getMapper().readTree(engineJson);
        } catch (JsonProcessingException e) {
            throw new NativeStateException("the engine returned a configuration that cannot be read: "
                    + e.getOriginalMessage());
        }
    }

    /**
     * @param layer a Java layer (a FrozenLayer is unwrapped)
     * @param engineLayer the same layer's object in the engine's resolved JSON
     */
    static void copyInto(Layer layer, JsonNode engineLayer) {
        String field = LayerWrappers.innerField(layer);
        if (field != null) {
            Layer inner = LayerWrappers.inner(layer);
            if (inner != null) {
                copyInto(inner, engineLayer.path(field));
            }
            return;
        }
        if (layer instanceof FeedForwardLayer) {
            FeedForwardLayer f = (FeedForwardLayer) layer;
            if (unset(f.getNIn()) && engineLayer.path("nIn").isNumber()) {
                f.setNIn(engineLayer.get("nIn").asLong());
            }
            if (unset(f.getNOut()) && engineLayer.path("nOut").isNumber()) {
                f.setNOut(engineLayer.get("nOut").asLong());
            }
        }
    }

    private static boolean unset(Long v) {
        return v == null || v == 0;
    }
}
