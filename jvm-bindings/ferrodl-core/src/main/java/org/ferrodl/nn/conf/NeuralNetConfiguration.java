package org.ferrodl.nn.conf;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.nn.conf.distribution.Distribution;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.Convolution1DLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.layers.Subsampling1DLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
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
     * Global settings of a network. Each applies to every layer that does not set its own value
     * (resolved into the layers by {@link ListBuilder#build()}). Defaults, as in the reference: seed
     * random, updater {@code Sgd(1e-3)}, bias updater = the layer's updater, activation SIGMOID,
     * weightInit XAVIER, biasInit 0, l1/l2/l1Bias/l2Bias/weightDecay/weightDecayBias 0, dropOut 0
     * (none), gradientNormalization None with threshold 1.0, convolutionMode Truncate, miniBatch true.
     *
     * <p>BatchNormalization layers take the global activation, updaters, weight initialization and
     * gradient normalization but not the global regularization (l1, l2, weight decay): as in the
     * reference, their parameters are regularized only by values set on the layer itself. A
     * {@link FrozenLayer} wrapper gets nothing (the wrapped layer gets everything).
     */
    public static class Builder implements Cloneable {
        private Long seed;
        private IUpdater updater = new Sgd();
        private IUpdater biasUpdater;
        private WeightInit weightInit = WeightInit.XAVIER;
        private Distribution dist;
        private Activation activation = Activation.SIGMOID;
        private double biasInit = 0.0;
        private double l1 = 0.0;
        private double l2 = 0.0;
        private double l1Bias = 0.0;
        private double l2Bias = 0.0;
        private double weightDecay = 0.0;
        private double weightDecayBias = 0.0;
        private double dropOut = 0.0;
        private GradientNormalization gradientNormalization = GradientNormalization.None;
        private double gradientNormalizationThreshold = 1.0;
        private ConvolutionMode convolutionMode = ConvolutionMode.Truncate;
        private boolean miniBatch = true;

        /** A builder with the defaults. */
        public Builder() {
        }

        /**
         * @param seed random seed of parameter initialization (default: a random value)
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * @param updater default updater of every layer (default {@code Sgd(1e-3)})
         * @return this builder
         */
        public Builder updater(IUpdater updater) {
            this.updater = Objects.requireNonNull(updater, "updater");
            return this;
        }

        /**
         * @param biasUpdater default updater of every layer's biases (default: the layer's updater)
         * @return this builder
         */
        public Builder biasUpdater(IUpdater biasUpdater) {
            this.biasUpdater = biasUpdater;
            return this;
        }

        /**
         * @param weightInit default weight initialization (default XAVIER); {@link WeightInit#DISTRIBUTION}
         *     keeps a distribution set before, any other scheme clears it
         * @return this builder
         */
        public Builder weightInit(WeightInit weightInit) {
            this.weightInit = Objects.requireNonNull(weightInit, "weightInit");
            if (weightInit != WeightInit.DISTRIBUTION) {
                this.dist = null;
            }
            return this;
        }

        /**
         * Default weights drawn from a distribution ({@code weightInit(WeightInit.DISTRIBUTION)} with it).
         *
         * @param distribution the distribution
         * @return this builder
         */
        public Builder weightInit(Distribution distribution) {
            this.weightInit = WeightInit.DISTRIBUTION;
            this.dist = Objects.requireNonNull(distribution, "distribution");
            return this;
        }

        /**
         * @param distribution the distribution of {@link WeightInit#DISTRIBUTION} (sets it as the weight
         *     initialization too)
         * @return this builder
         * @see #weightInit(Distribution)
         */
        public Builder dist(Distribution distribution) {
            return weightInit(distribution);
        }

        /**
         * @param activation default activation (default SIGMOID)
         * @return this builder
         */
        public Builder activation(Activation activation) {
            this.activation = Objects.requireNonNull(activation, "activation");
            return this;
        }

        /**
         * @param biasInit default bias initial value (default 0)
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
         * Default weight decay of weights: after the updater, {@code update += lr · coefficient · w}.
         *
         * @param coefficient weight decay coefficient (default 0)
         * @return this builder
         */
        public Builder weightDecay(double coefficient) {
            this.weightDecay = coefficient;
            return this;
        }

        /**
         * @param coefficient default weight decay coefficient of biases (default 0)
         * @return this builder
         */
        public Builder weightDecayBias(double coefficient) {
            this.weightDecayBias = coefficient;
            return this;
        }

        /**
         * Default dropout of every layer's input: each input activation is kept with probability
         * {@code inputRetainProbability} during training. {@code 0} (the default) disables dropout.
         *
         * @param inputRetainProbability retain probability in [0, 1]
         * @return this builder
         */
        public Builder dropOut(double inputRetainProbability) {
            this.dropOut = inputRetainProbability;
            return this;
        }

        /**
         * @param gradientNormalization default gradient normalization (default None)
         * @return this builder
         */
        public Builder gradientNormalization(GradientNormalization gradientNormalization) {
            this.gradientNormalization = Objects.requireNonNull(gradientNormalization, "gradientNormalization");
            return this;
        }

        /**
         * @param threshold default threshold of the clipping modes (default 1.0)
         * @return this builder
         */
        public Builder gradientNormalizationThreshold(double threshold) {
            this.gradientNormalizationThreshold = threshold;
            return this;
        }

        /**
         * @param convolutionMode default convolution mode of convolution and subsampling layers
         *     (default Truncate)
         * @return this builder
         */
        public Builder convolutionMode(ConvolutionMode convolutionMode) {
            this.convolutionMode = Objects.requireNonNull(convolutionMode, "convolutionMode");
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

        /**
         * A builder for a computation graph (named inputs, layers and vertices, outputs) with these
         * global settings.
         *
         * @return the graph builder
         */
        public ComputationGraphConfiguration.GraphBuilder graphBuilder() {
            return new ComputationGraphConfiguration.GraphBuilder(this);
        }

        /** @return the seed set, or a fresh random one (each network gets its own when none is set) */
        long resolvedSeed() {
            return seed != null ? seed : ThreadLocalRandom.current().nextLong();
        }

        /** @return the minibatch mode */
        boolean isMiniBatch() {
            return miniBatch;
        }

        @Override
        public Builder clone() {
            try {
                Builder b = (Builder) super.clone();
                b.updater = updater.clone();
                b.biasUpdater = biasUpdater == null ? null : biasUpdater.clone();
                b.dist = dist == null ? null : dist.clone();
                return b;
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }

        /** Fills every unset setting of {@code layer} from the global values. */
        void resolveInto(Layer layer) {
            Layer inner = LayerWrappers.inner(layer);
            if (LayerWrappers.innerField(layer) != null) {
                // A wrapper (frozen, bidirectional, last time step, ...): the wrapped layer takes every
                // global value, including the input dropout, so the wrapper's own is 0.
                if (layer.getDropOut() == null) {
                    layer.setDropOut(0.0);
                }
                if (inner != null) {
                    resolveInto(inner);
                }
                return;
            }
            if (layer.getDropOut() == null) {
                layer.setDropOut(dropOut);
            }
            if (layer instanceof BaseLayer) {
                resolveBase((BaseLayer) layer);
            }
            if (layer instanceof ActivationLayer && ((ActivationLayer) layer).getActivation() == null) {
                ((ActivationLayer) layer).setActivation(activation);
            }
            if (layer instanceof ConvolutionLayer && ((ConvolutionLayer) layer).getConvolutionMode() == null) {
                ((ConvolutionLayer) layer).setConvolutionMode(convolutionMode);
            }
            if (layer instanceof Convolution1DLayer && ((Convolution1DLayer) layer).getConvolutionMode() == null) {
                ((Convolution1DLayer) layer).setConvolutionMode(convolutionMode);
            }
            if (layer instanceof SubsamplingLayer && ((SubsamplingLayer) layer).getConvolutionMode() == null) {
                ((SubsamplingLayer) layer).setConvolutionMode(convolutionMode);
            }
            if (layer instanceof Subsampling1DLayer && ((Subsampling1DLayer) layer).getConvolutionMode() == null) {
                ((Subsampling1DLayer) layer).setConvolutionMode(convolutionMode);
            }
        }

        private void resolveBase(BaseLayer b) {
            if (b.getActivation() == null) {
                b.setActivation(activation);
            }
            if (b.getWeightInit() == null) {
                b.setWeightInit(weightInit);
                b.setWeightInitDistribution(dist == null ? null : dist.clone());
            } else if (b.getWeightInit() == WeightInit.DISTRIBUTION && b.getWeightInitDistribution() == null
                    && dist != null) {
                b.setWeightInitDistribution(dist.clone());
            }
            if (b.getBiasInit() == null) {
                b.setBiasInit(biasInit);
            }
            // the reference does not regularize batch normalization parameters with the global values
            boolean regularize = !(b instanceof BatchNormalization);
            if (b.getL1() == null) {
                b.setL1(regularize ? l1 : 0.0);
            }
            if (b.getL2() == null) {
                b.setL2(regularize ? l2 : 0.0);
            }
            if (b.getL1Bias() == null) {
                b.setL1Bias(regularize ? l1Bias : 0.0);
            }
            if (b.getL2Bias() == null) {
                b.setL2Bias(regularize ? l2Bias : 0.0);
            }
            if (b.getWeightDecay() == null) {
                b.setWeightDecay(regularize ? weightDecay : 0.0);
            }
            if (b.getWeightDecayBias() == null) {
                b.setWeightDecayBias(regularize ? weightDecayBias : 0.0);
            }
            if (b.getIUpdater() == null) {
                b.setIUpdater(updater.clone());
            }
            if (b.getBiasUpdater() == null) {
                b.setBiasUpdater(biasUpdater != null ? biasUpdater.clone() : b.getIUpdater().clone());
            }
            if (b.getGradientNormalization() == null) {
                b.setGradientNormalization(gradientNormalization);
            }
            if (b.getGradientNormalizationThreshold() == null) {
                b.setGradientNormalizationThreshold(gradientNormalizationThreshold);
            }
        }
    }

    /**
     * The list of layers of a multi-layer network. {@link #build()} copies the layers, fills unset
     * settings from the global builder, infers unset {@code nIn} values from the input type, validates
     * and returns the configuration.
     */
    public static class ListBuilder {
        private final Builder globals;
        private final List<Layer> layers = new ArrayList<>();
        private InputType inputType;
        private BackpropType backpropType = BackpropType.Standard;
        private int tbpttFwdLength = TbpttSettings.DEFAULT_LENGTH;
        private int tbpttBackLength = TbpttSettings.DEFAULT_LENGTH;
        private final TreeMap<Integer, InputPreProcessor> inputPreProcessors = new TreeMap<>();

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
                throw new DL4JInvalidConfigException("layer index " + index
                        + " is out of range: layers must be added in order (next index is " + layers.size() + ")");
            }
            return this;
        }

        /**
         * The type of the network's input. {@link #build()} infers every layer's unset {@code nIn} from
         * it (a dense layer after a convolutional one takes {@code C·H·W}) and it is written to the
         * configuration. Without it the input is feed-forward of the first layer's {@code nIn}.
         *
         * @param inputType the input type, e.g. {@code InputType.convolutionalFlat(28, 28, 1)}
         * @return this builder
         */
        public ListBuilder setInputType(InputType inputType) {
            this.inputType = inputType;
            return this;
        }

        /** @return the input type set, or null */
        public InputType getInputType() {
            return inputType;
        }

        /**
         * How recurrent layers are trained: {@link BackpropType#Standard} (default) backpropagates
         * through the whole sequence; {@link BackpropType#TruncatedBPTT} cuts it into segments of
         * {@link #tBPTTForwardLength(int)} steps, one update each.
         *
         * @param type the backpropagation type
         * @return this builder
         */
        public ListBuilder backpropType(BackpropType type) {
            this.backpropType = Objects.requireNonNull(type, "backpropType");
            return this;
        }

        /**
         * Sets the truncated BPTT forward and backward lengths to the same value.
         *
         * @param length time steps per segment (at least 1; default 20)
         * @return this builder
         */
        public ListBuilder tBPTTLength(int length) {
            return tBPTTForwardLength(length).tBPTTBackwardLength(length);
        }

        /**
         * @param forwardLength time steps per truncated BPTT segment (at least 1, checked at
         *     {@link #build()}; default 20)
         * @return this builder
         */
        public ListBuilder tBPTTForwardLength(int forwardLength) {
            this.tbpttFwdLength = forwardLength;
            return this;
        }

        /**
         * @param backwardLength time steps backpropagated per truncated BPTT segment (at least 1,
         *     checked at {@link #build()}; default 20; usually equal to the forward length)
         * @return this builder
         */
        public ListBuilder tBPTTBackwardLength(int backwardLength) {
            this.tbpttBackLength = backwardLength;
            return this;
        }

        /**
         * Gives the preprocessor of a layer's input explicitly (the engine otherwise inserts the
         * reference's implicit ones: recurrent → feed-forward, feed-forward → recurrent, CNN → RNN,
         * CNN → feed-forward where the activation kinds differ).
         *
         * @param layer the layer index
         * @param processor the preprocessor, or null to remove one given before
         * @return this builder
         */
        public ListBuilder inputPreProcessor(int layer, InputPreProcessor processor) {
            if (layer < 0) {
                throw new DL4JInvalidConfigException("inputPreProcessor: layer index " + layer + " is negative");
            }
            if (processor == null) {
                inputPreProcessors.remove(layer);
            } else {
                inputPreProcessors.put(layer, processor);
            }
            return this;
        }

        /**
         * @param processors preprocessors by layer index (replacing those given before)
         * @return this builder
         */
        public ListBuilder inputPreProcessors(Map<Integer, InputPreProcessor> processors) {
            inputPreProcessors.clear();
            if (processors != null) {
                processors.forEach(this::inputPreProcessor);
            }
            return this;
        }

        /** @return a copy of the layers added so far (not resolved) */
        public List<Layer> getLayers() {
            return new ArrayList<>(layers);
        }

        /**
         * @return the validated configuration
         * @throws DL4JInvalidConfigException naming the layer index, type, name and the problem
         */
        public MultiLayerConfiguration build() {
            List<Layer> resolved = new ArrayList<>(layers.size());
            for (Layer l : layers) {
                Layer c = l.clone();
                globals.resolveInto(c);
                resolved.add(c);
            }
            MultiLayerConfiguration conf = new MultiLayerConfiguration(globals.resolvedSeed(), globals.miniBatch,
                    inputType, resolved);
            conf.setBackpropType(backpropType);
            conf.setTbpttFwdLength(tbpttFwdLength);
            conf.setTbpttBackLength(tbpttBackLength);
            Map<Integer, InputPreProcessor> pre = new TreeMap<>();
            inputPreProcessors.forEach((i, p) -> pre.put(i, p.clone()));
            conf.setInputPreProcessors(pre);
            conf.inferAndValidate();
            return conf;
        }
    }
}
