package org.ferrodl.nn.conf.layers;

import java.util.List;
import org.ferrodl.exception.DL4JInvalidConfigException;

/**
 * The settings checks of a list of resolved layers: every setting present and in range (rates,
 * regularization, dropout, window sizes, loss weights...), named by layer index, type and name.
 * Nothing here depends on a layer's input: shapes, nIn inference and the network's structure are
 * checked by the engine ({@code NativeConfiguration}), which the configurations call next.
 */
public final class LayerValidation {
    private LayerValidation() {
    }

    /**
     * @param layers resolved layers
     * @throws DL4JInvalidConfigException naming the layer index, type, name and the problem
     */
    public static void checkSettings(List<Layer> layers) {
        for (int i = 0; i < layers.size(); i++) {
            Layer l = layers.get(i);
            if (l == null) {
                throw new DL4JInvalidConfigException("layer " + i + " is null");
            }
            String who = l.describe(i);
            l.checkSettings(who);
            for (Layer inner = LayerWrappers.inner(l); inner != null; inner = LayerWrappers.inner(inner)) {
                inner.checkSettings(who);
            }
        }
    }
}
