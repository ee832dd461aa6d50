package org.ferrodl.jni;

/**
 * The engine's configuration rules, for the Java builders: {@code build()} sends its JSON here so
 * that shape inference ({@code nIn} from {@code setInputType(s)}), shape checks and graph checks
 * exist once, in the engine (docs/ARCHITECTURE.md §2).
 *
 * <p>Errors are {@link org.ferrodl.exception.DL4JInvalidConfigException}s whose message names the
 * layer ({@code layer 2 (DenseLayer)}) or vertex ({@code vertex "add" (ElementWiseVertex)}).
 *
 * <p>Thread-safety: stateless; any thread.
 */
public final class NativeConfiguration {
    static {
        NativeLoader.load();
    }

    private NativeConfiguration() {
    }

    /**
     * Validates a MultiLayerConfiguration JSON and returns it with every unset {@code nIn} (absent,
     * null or 0) inferred from {@code inputType} and the layers before it (BatchNormalization's
     * {@code nOut} follows its {@code nIn}).
     *
     * @param json the configuration JSON (ARCHITECTURE.md §2.1)
     * @return the completed configuration JSON
     */
    public static native String resolveMultiLayer(String json);

    /**
     * The same for a ComputationGraphConfiguration JSON (ARCHITECTURE.md §2.4): also checks names,
     * connections, cycles, output layers and every vertex's shape rule.
     *
     * @param json the graph configuration JSON
     * @return the completed configuration JSON
     */
    public static native String resolveGraph(String json);

    /**
     * @param json a valid MultiLayerConfiguration JSON
     * @return a JSON array with, per layer, {@code inputType}, {@code outputType} (InputType
     *     objects) and {@code numParams}
     */
    public static native String multiLayerTypes(String json);

    /**
     * @param json a valid ComputationGraphConfiguration JSON
     * @return a JSON object: {@code order} (vertex names in execution order), {@code networkInputs}
     *     ({@code name}, {@code type}) and {@code vertices} ({@code name}, {@code inputTypes},
     *     {@code outputType}, {@code numParams}, in configuration order)
     */
    public static native String graphTypes(String json);
}
