package org.ferrodl.nn.gradient;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.nn.info.NetworkInfo.ParamEntry;

/**
 * A network's gradient, as the reference's {@code Gradient}: the flat vector in the layout of the
 * network's {@code params()}, and the same values per parameter key ({@code "dense1_W"}) shaped
 * like the parameters. An immutable snapshot taken when it was created.
 */
public final class Gradient {
    private final float[] flat;
    private final Map<String, INDArray> byKey;

    /**
     * @param flat the flat gradient (owned by this object)
     * @param layout the parameter blocks in layout order
     */
    public Gradient(float[] flat, List<ParamEntry> layout) {
        this.flat = flat;
        Map<String, INDArray> m = new LinkedHashMap<>();
        for (ParamEntry e : layout) {
            m.put(e.key, e.slice(flat));
        }
        this.byKey = Collections.unmodifiableMap(m);
    }

    /** @return a copy of the flat gradient, shape {@code [1, numParams]} */
    public INDArray gradient() {
        return new NDArray(flat.clone(), 1, flat.length);
    }

    /** @return the gradient per parameter key, in layout order (read-only map; arrays are copies) */
    public Map<String, INDArray> gradientForVariable() {
        Map<String, INDArray> m = new LinkedHashMap<>();
        for (Map.Entry<String, INDArray> e : byKey.entrySet()) {
            m.put(e.getKey(), e.getValue().dup());
        }
        return Collections.unmodifiableMap(m);
    }

    /**
     * @param key a parameter key, e.g. {@code "dense1_W"}
     * @return a copy of that block's gradient
     * @throws IllegalArgumentException for an unknown key
     */
    public INDArray getGradientFor(String key) {
        INDArray g = byKey.get(key);
        if (g == null) {
            throw new IllegalArgumentException("no gradient for \"" + key + "\"; the keys are " + byKey.keySet());
        }
        return g.dup();
    }

    @Override
    public String toString() {
        return "Gradient(" + flat.length + " values, keys=" + byKey.keySet() + ")";
    }
}
