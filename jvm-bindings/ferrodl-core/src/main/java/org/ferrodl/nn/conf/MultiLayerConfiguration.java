package org.ferrodl.nn.conf;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.serde.JsonMappers;

/**
 * The configuration of a multi-layer network: seed, minibatch mode, training counters and the
 * fully resolved layers. Its JSON form ({@link #toJson()}) is the exact document the native engine
 * parses (docs/ARCHITECTURE.md §2, {@code formatVersion} {@value #FORMAT_VERSION}).
 *
 * <p>Mutable (counters) and not thread-safe.
 */
@JsonPropertyOrder({"formatVersion", "seed", "miniBatch", "iterationCount", "epochCount", "layers"})
public class MultiLayerConfiguration implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** The JSON format version written and accepted. */
    public static final int FORMAT_VERSION = 1;

    private int formatVersion = FORMAT_VERSION;
    private long seed;
    private boolean miniBatch = true;
    private int iterationCount;
    private int epochCount;
    private List<Layer> layers = new ArrayList<>();

    /** For deserialization. */
    protected MultiLayerConfiguration() {
    }

    /**
     * Creates a configuration from resolved layers; prefer {@link NeuralNetConfiguration.Builder}.
     * Call {@link #validate()} to check it.
     *
     * @param seed seed
     * @param miniBatch minibatch mode
     * @param layers resolved layers (copied)
     */
    public MultiLayerConfiguration(long seed, boolean miniBatch, List<Layer> layers) {
        this.seed = seed;
        this.miniBatch = miniBatch;
        this.layers = new ArrayList<>(layers);
    }

    /** @return the seed of parameter initialization */
    public long getSeed() {
        return seed;
    }

    /** @return whether the score is averaged over each minibatch */
    public boolean isMiniBatch() {
        return miniBatch;
    }

    /** @return the number of training iterations (minibatches) done so far */
    public int getIterationCount() {
        return iterationCount;
    }

    /** @param iterationCount the iteration counter */
    public void setIterationCount(int iterationCount) {
        this.iterationCount = iterationCount;
    }

    /** @return the number of training epochs done so far */
    public int getEpochCount() {
        return epochCount;
    }

    /** @param epochCount the epoch counter */
    public void setEpochCount(int epochCount) {
        this.epochCount = epochCount;
    }

    /** @return the layers (unmodifiable view; the layer objects themselves are live) */
    public List<Layer> getLayers() {
        return Collections.unmodifiableList(layers);
    }

    /**
     * @param i layer index
     * @return the per-layer configuration of layer {@code i}
     */
    public NeuralNetConfiguration getConf(int i) {
        return new NeuralNetConfiguration(seed, miniBatch, layers.get(i));
    }

    /** @return the JSON form (docs/ARCHITECTURE.md §2) */
    public String toJson() {
        return write(JsonMappers.getMapper(), "JSON");
    }

    /** @return the YAML form: the same fields as {@link #toJson()} */
    public String toYaml() {
        return write(JsonMappers.getMapperYaml(), "YAML");
    }

    private String write(ObjectMapper m, String what) {
        try {
            return m.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the configuration as " + what + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param json a document written by {@link #toJson()}
     * @return the configuration
     * @throws DL4JInvalidConfigException for malformed JSON, unknown fields, another format version
     *     or an invalid configuration
     */
    public static MultiLayerConfiguration fromJson(String json) {
        return read(JsonMappers.getMapper(), json, "JSON");
    }

    /**
     * @param yaml a document written by {@link #toYaml()}
     * @return the configuration
     * @throws DL4JInvalidConfigException as {@link #fromJson(String)}
     */
    public static MultiLayerConfiguration fromYaml(String yaml) {
        return read(JsonMappers.getMapperYaml(), yaml, "YAML");
    }

    private static MultiLayerConfiguration read(ObjectMapper m, String text, String what) {
        Objects.requireNonNull(text, what);
        MultiLayerConfiguration c;
        try {
            c = m.readValue(text, MultiLayerConfiguration.class);
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid MultiLayerConfiguration " + what + ": "
                    + e.getOriginalMessage(), e);
        }
        if (c == null) {
            throw new DL4JInvalidConfigException("invalid MultiLayerConfiguration " + what + ": empty document");
        }
        if (c.formatVersion != FORMAT_VERSION) {
            throw new DL4JInvalidConfigException("unsupported MultiLayerConfiguration formatVersion "
                    + c.formatVersion + " (this version of ferrodl reads formatVersion " + FORMAT_VERSION + ")");
        }
        if (c.layers == null) {
            c.layers = new ArrayList<>();
        }
        c.validate();
        return c;
    }

    /**
     * Checks the configuration: at least one layer; every layer complete, with {@code nIn > 0},
     * {@code nOut > 0} and {@code nIn} equal to the previous layer's {@code nOut}; no SOFTMAX with a
     * single output; an OutputLayer as the last layer and only there; valid regularization and updaters.
     *
     * @throws DL4JInvalidConfigException naming the layer index and the problem
     */
    public void validate() {
        if (layers.isEmpty()) {
            throw new DL4JInvalidConfigException("MultiLayerConfiguration has no layers: add at least one with "
                    + "list().layer(..)");
        }
        if (iterationCount < 0 || epochCount < 0) {
            throw new DL4JInvalidConfigException("iterationCount and epochCount must be >= 0, got "
                    + iterationCount + " and " + epochCount);
        }
        for (int i = 0; i < layers.size(); i++) {
            Layer l = layers.get(i);
            if (l == null) {
                throw new DL4JInvalidConfigException("layer " + i + " is null");
            }
            if (!(l instanceof FeedForwardLayer)) {
                throw fail(i, l, "unsupported layer type " + l.getClass().getName());
            }
            FeedForwardLayer f = (FeedForwardLayer) l;
            if (f.getNIn() == null || f.getNIn() <= 0) {
                throw fail(i, l, "nIn is " + (f.getNIn() == null ? "not set" : f.getNIn().toString())
                        + "; set it with .nIn(..) to a positive number"
                        + (i > 0 ? " (the previous layer's nOut)" : " (the number of input features)"));
            }
            if (f.getNOut() == null || f.getNOut() <= 0) {
                throw fail(i, l, "nOut is " + (f.getNOut() == null ? "not set" : f.getNOut().toString())
                        + "; set it with .nOut(..) to a positive number");
            }
            if (i > 0) {
                FeedForwardLayer prev = (FeedForwardLayer) layers.get(i - 1);
                if (!f.getNIn().equals(prev.getNOut())) {
                    throw fail(i, l, "nIn=" + f.getNIn() + " does not match nOut=" + prev.getNOut()
                            + " of layer " + (i - 1));
                }
            }
            if (l instanceof OutputLayer && i != layers.size() - 1) {
                throw fail(i, l, "an OutputLayer must be the last layer (there are " + layers.size() + " layers)");
            }
            if (!(l instanceof OutputLayer) && i == layers.size() - 1) {
                throw fail(i, l, "the last layer must be an OutputLayer (it defines the loss function)");
            }
            checkComplete(i, f);
            if (f.getActivation() == Activation.SOFTMAX && f.getNOut() == 1) {
                throw fail(i, l, "SOFTMAX activation with nOut=1 always outputs 1.0; use SIGMOID for a single "
                        + "output or nOut >= 2");
            }
        }
    }

    private static void checkComplete(int i, FeedForwardLayer f) {
        String missing = null;
        if (f.getActivation() == null) {
            missing = "activation";
        } else if (f.getWeightInit() == null) {
            missing = "weightInit";
        } else if (f.getBiasInit() == null) {
            missing = "biasInit";
        } else if (f.getHasBias() == null) {
            missing = "hasBias";
        } else if (f.getL1() == null) {
            missing = "l1";
        } else if (f.getL2() == null) {
            missing = "l2";
        } else if (f.getL1Bias() == null) {
            missing = "l1Bias";
        } else if (f.getL2Bias() == null) {
            missing = "l2Bias";
        } else if (f.getIUpdater() == null) {
            missing = "updater";
        } else if (f.getBiasUpdater() == null) {
            missing = "biasUpdater";
        } else if (f instanceof OutputLayer && ((OutputLayer) f).getLossFunction() == null) {
            missing = "lossFunction";
        }
        if (missing != null) {
            throw fail(i, f, missing + " is missing");
        }
        checkNonNegative(i, f, "l1", f.getL1());
        checkNonNegative(i, f, "l2", f.getL2());
        checkNonNegative(i, f, "l1Bias", f.getL1Bias());
        checkNonNegative(i, f, "l2Bias", f.getL2Bias());
        if (!Double.isFinite(f.getBiasInit())) {
            throw fail(i, f, "biasInit must be finite, got " + f.getBiasInit());
        }
        checkUpdater(i, f, "updater", f.getIUpdater());
        checkUpdater(i, f, "biasUpdater", f.getBiasUpdater());
    }

    private static void checkNonNegative(int i, Layer l, String name, double v) {
        if (!(Double.isFinite(v) && v >= 0)) {
            throw fail(i, l, name + " must be finite and >= 0, got " + v);
        }
    }

    private static void checkUpdater(int i, BaseLayer l, String name, IUpdater u) {
        String problem = u.validate();
        if (problem != null) {
            throw fail(i, l, name + " " + u.getClass().getSimpleName() + ": " + problem);
        }
    }

    private static DL4JInvalidConfigException fail(int i, Layer l, String problem) {
        String name = l.getLayerName() == null ? "" : " \"" + l.getLayerName() + "\"";
        return new DL4JInvalidConfigException("Invalid configuration of layer " + i + " ("
                + l.getClass().getSimpleName() + name + "): " + problem);
    }

    @Override
    public MultiLayerConfiguration clone() {
        MultiLayerConfiguration c;
        try {
            c = (MultiLayerConfiguration) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
        c.layers = new ArrayList<>(layers.size());
        for (Layer l : layers) {
            c.layers.add(l.clone());
        }
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MultiLayerConfiguration)) {
            return false;
        }
        MultiLayerConfiguration c = (MultiLayerConfiguration) o;
        return formatVersion == c.formatVersion && seed == c.seed && miniBatch == c.miniBatch
                && iterationCount == c.iterationCount && epochCount == c.epochCount && layers.equals(c.layers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(formatVersion, seed, miniBatch, iterationCount, epochCount, layers);
    }

    @Override
    public String toString() {
        return toJson();
    }
}
