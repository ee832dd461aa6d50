package org.ferrodl.nn.conf;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.serde.JsonMappers;
import org.ferrodl.nn.weights.WeightInit;

/**
 * The configuration of one layer within a network (seed, minibatch mode, layer), as returned by
 * {@link MultiLayerConfiguration#getConf(int)}; and, through {@link Builder}, the entry point for
 * building a network configuration:
 *
 * <pre>{@code
 * MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder()
 *     .seed(12345).updater(new Adam(1e-3)).weightInit(WeightInit.XAVIER).l2(1e-4)
 *     .list()
 *     .layer(new DenseLayer.Builder().nIn(784).nOut(100).activation(Activation.RELU).build())
 *     .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(100).nOut(10).activation(Activation.SOFTMAX).build())
 *     .build();
 * }</pre>
 *
 * <p>Not thread-safe (builders and configurations are mutable).
 */
public class NeuralNetConfiguration implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    private long seed;
    private boolean miniBatch;
    private Layer layer;

    /** An empty per-layer configuration. */
    public NeuralNetConfiguration() {
    }

    /**
     * @param seed the network seed
     * @param miniBatch minibatch mode
     * @param layer the layer's configuration
     */
    public NeuralNetConfiguration(long seed, boolean miniBatch, Layer layer) {
        this.seed = seed;
        this.miniBatch = miniBatch;
        this.layer = layer;
    }

    /** @return the network seed */
    public long getSeed() {
        return seed;
    }

    /** @return whether the score is averaged over the minibatch */
    public boolean isMiniBatch() {
        return miniBatch;
    }

    /** @return the layer configuration */
    public Layer getLayer() {
        return layer;
    }

    /** @param layer the layer configuration */
    public void setLayer(Layer layer) {
        this.layer = layer;
    }

    /** @return the JSON mapper used for configurations */
    public static ObjectMapper mapper() {
        return JsonMappers.getMapper();
    }

    /** @return the YAML mapper used for configurations */
    public static ObjectMapper mapperYaml() {
        return JsonMappers.getMapperYaml();
    }

    @Override
    public NeuralNetConfiguration clone() {
        return new NeuralNetConfiguration(seed, miniBatch, layer == null ? null : layer.clone());
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof NeuralNetConfiguration)) {
            return false;
        }
        NeuralNetConfiguration c = (NeuralNetConfiguration) o;
        return seed == c.seed && miniBatch == c.miniBatch && Objects.equals(layer, c.layer);
    }

    @Override
    public int hashCode() {
        return Objects.hash(seed, miniBatch, layer);
    }

    /**
     * Global settings of a network. Each applies to every layer that does not set its own value.
     * Defaults: seed random, updater {@code Sgd(1e-3)}, bias updater = the layer's updater,
     * activation SIGMOID, weightInit XAVIER, biasInit 0, l1/l2/l1Bias/l2Bias 0, miniBatch true.
     */
    public static class Builder implements Cloneable {
        private Long seed;
        private IUpdater updater = new Sgd();
        private IUpdater biasUpdater;
        private WeightInit weightInit = WeightInit.XAVIER;
        private Activation activation = Activation.SIGMOID;
        private double biasInit = 0.0;
        private double l1 = 0.0;
        private double l2 = 0.0;
        private double l1Bias = 0.0;
        private double l2Bias = 0.0;
        private boolean miniBatch = true;

        /** A builder with the defaults. */
        public Builder() {
        }

        /**
         * @param seed random seed of parameter initialization
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * @param updater default updater of every layer
         * @return this builder
         */
        public Builder updater(IUpdater updater) {
            this.updater = Objects.requireNonNull(updater, "updater");
            return this;
        }

        /**
         * @param biasUpdater default updater of every layer's biases
         * @return this builder
         */
        public Builder biasUpdater(IUpdater biasUpdater) {
            this.biasUpdater = biasUpdater;
            return this;
        }

        /**
         * @param weightInit default weight initialization
         * @return this builder
         */
        public Builder weightInit(WeightInit weightInit) {
            this.weightInit = Objects.requireNonNull(weightInit, "weightInit");
            return this;
        }

        /**
         * @param activation default activation
         * @return this builder
         */
        public Builder activation(Activation activation) {
            this.activation = Objects.requireNonNull(activation, "activation");
            return this;
        }

        /**
         * @param biasInit default bias initial value
         * @return this builder
         */
        public Builder biasInit(double biasInit) {
            this.biasInit = biasInit;
            return this;
        }

        /**
         * @param l1 default L1 coefficient of weights
         * @return this builder
         */
        public Builder l1(double l1) {
            this.l1 = l1;
            return this;
        }

        /**
         * @param l2 default L2 coefficient of weights
         * @return this builder
         */
        public Builder l2(double l2) {
            this.l2 = l2;
            return this;
        }

        /**
         * @param l1Bias default L1 coefficient of biases
         * @return this builder
         */
        public Builder l1Bias(double l1Bias) {
            this.l1Bias = l1Bias;
            return this;
        }

        /**
         * @param l2Bias default L2 coefficient of biases
         * @return this builder
         */
        public Builder l2Bias(double l2Bias) {
            this.l2Bias = l2Bias;
            return this;
        }

        /**
         * @param miniBatch true (default): the score is the mean over the minibatch's examples
         * @return this builder
         */
        public Builder miniBatch(boolean miniBatch) {
            this.miniBatch = miniBatch;
            return this;
        }

        /** @return a builder for the list of layers */
        public ListBuilder list() {
            return new ListBuilder(this.clone());
        }

        /**
         * @param layers the layers, in order
         * @return a builder for the list of layers holding {@code layers}
         */
        public ListBuilder list(Layer... layers) {
            ListBuilder lb = list();
            for (Layer l : layers) {
                lb.layer(l);
            }
            return lb;
        }

        @Override
        public Builder clone() {
            try {
                Builder b = (Builder) super.clone();
                b.updater = updater.clone();
                b.biasUpdater = biasUpdater == null ? null : biasUpdater.clone();
                return b;
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }

        /** Fills every unset setting of {@code layer} from the global values. */
        void resolveInto(Layer layer) {
            if (!(layer instanceof BaseLayer)) {
                return;
            }
            BaseLayer b = (BaseLayer) layer;
            if (b.getActivation() == null) {
                b.setActivation(activation);
            }
            if (b.getWeightInit() == null) {
                b.setWeightInit(weightInit);
            }
            if (b.getBiasInit() == null) {
                b.setBiasInit(biasInit);
            }
            if (b.getL1() == null) {
                b.setL1(l1);
            }
            if (b.getL2() == null) {
                b.setL2(l2);
            }
            if (b.getL1Bias() == null) {
                b.setL1Bias(l1Bias);
            }
            if (b.getL2Bias() == null) {
                b.setL2Bias(l2Bias);
            }
            if (b.getIUpdater() == null) {
                b.setIUpdater(updater.clone());
            }
            if (b.getBiasUpdater() == null) {
                b.setBiasUpdater(biasUpdater != null ? biasUpdater.clone() : b.getIUpdater().clone());
            }
            if (layer instanceof FeedForwardLayer) {
                FeedForwardLayer f = (FeedForwardLayer) layer;
                if (f.getHasBias() == null) {
                    f.setHasBias(Boolean.TRUE);
                }
            }
        }
    }

    /**
     * The list of layers of a multi-layer network. {@link #build()} copies the layers, fills unset
     * settings from the global builder, validates and returns the configuration.
     */
    public static class ListBuilder {
        private final Builder globals;
        private final List<Layer> layers = new ArrayList<>();

        /** @param globals the global settings */
        public ListBuilder(Builder globals) {
            this.globals = globals;
        }

        /**
         * Appends a layer.
         *
         * @param layer the layer configuration
         * @return this builder
         */
        public ListBuilder layer(Layer layer) {
            layers.add(Objects.requireNonNull(layer, "layer"));
            return this;
        }

        /**
         * Sets the layer at {@code index}: replaces an existing one, or appends when {@code index}
         * equals the current number of layers.
         *
         * @param index layer index
         * @param layer the layer configuration
         * @return this builder
         */
        public ListBuilder layer(int index, Layer layer) {
            Objects.requireNonNull(layer, "layer");
            if (index == layers.size()) {
                layers.add(layer);
            } else if (index >= 0 && index < layers.size()) {
                layers.set(index, layer);
            } else {
                throw new org.ferrodl.exception.DL4JInvalidConfigException("layer index " + index
                        + " is out of range: layers must be added in order (next index is " + layers.size() + ")");
            }
            return this;
        }

        /**
         * @return the validated configuration
         * @throws org.ferrodl.exception.DL4JInvalidConfigException naming the layer index and the problem
         */
        public MultiLayerConfiguration build() {
            List<Layer> resolved = new ArrayList<>(layers.size());
            for (Layer l : layers) {
                Layer c = l.clone();
                globals.resolveInto(c);
                resolved.add(c);
            }
            long seed = globals.seed != null ? globals.seed : ThreadLocalRandom.current().nextLong();
            MultiLayerConfiguration conf = new MultiLayerConfiguration(seed, globals.miniBatch, resolved);
            conf.validate();
            return conf;
        }
    }
}
