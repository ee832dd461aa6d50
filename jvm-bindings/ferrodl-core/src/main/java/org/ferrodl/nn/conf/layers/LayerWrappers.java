package org.ferrodl.nn.conf.layers;

import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.conf.layers.recurrent.Bidirectional;
import org.ferrodl.nn.conf.layers.recurrent.LastTimeStep;
import org.ferrodl.nn.conf.layers.util.MaskZeroLayer;
import org.ferrodl.nn.conf.layers.wrapper.BaseWrapperLayer;

/**
 * The one place that knows which layers wrap another one ({@link FrozenLayer}, {@link Bidirectional},
 * the {@link BaseWrapperLayer}s) and under which JSON field the wrapped layer is written, so the
 * global-settings resolution, the settings checks and the copy of the engine's inferred sizes all
 * reach the wrapped layer the same way.
 */
public final class LayerWrappers {
    private LayerWrappers() {
    }

    /**
     * @param l a layer
     * @return the layer it wraps, or null when it is not a wrapper
     */
    public static Layer inner(Layer l) {
        if (l instanceof FrozenLayer) {
            return ((FrozenLayer) l).getLayer();
        }
        if (l instanceof Bidirectional) {
            return ((Bidirectional) l).getFwd();
        }
        if (l instanceof BaseWrapperLayer) {
            return ((BaseWrapperLayer) l).getUnderlying();
        }
        return null;
    }

    /**
     * @param l a wrapper layer
     * @return the JSON field holding the wrapped layer ({@code layer}, {@code fwd} or {@code underlying}),
     *     or null when {@code l} is not a wrapper
     */
    public static String innerField(Layer l) {
        if (l instanceof FrozenLayer) {
            return "layer";
        }
        if (l instanceof Bidirectional) {
            return "fwd";
        }
        return l instanceof BaseWrapperLayer ? "underlying" : null;
    }

    /**
     * @param l a wrapper layer or any other
     * @return the innermost layer (itself when it wraps nothing)
     */
    public static Layer innermost(Layer l) {
        Layer cur = l;
        while (inner(cur) != null) {
            cur = inner(cur);
        }
        return cur;
    }

    /**
     * Whether a layer keeps a state along the time axis: a recurrent layer, a {@link Bidirectional}
     * one, or a {@link LastTimeStep}, {@link MaskZeroLayer} or {@link FrozenLayer} around one.
     *
     * @param l a layer
     * @return true for a recurrent layer
     */
    public static boolean isRecurrent(Layer l) {
        if (l instanceof BaseRecurrentLayer || l instanceof Bidirectional) {
            return true;
        }
        if (l instanceof LastTimeStep || l instanceof MaskZeroLayer || l instanceof FrozenLayer) {
            Layer in = inner(l);
            return in != null && isRecurrent(in);
        }
        return false;
    }
}
