package org.ferrodl.nn.transferlearning;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.FerroIllegalArgumentException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.nn.conf.InputPreProcessor;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.distribution.Distribution;
import org.ferrodl.nn.conf.graph.GraphVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;

/**
 * Transfer learning: a new network made from a trained one, with some layers frozen, some changed,
 * removed or added, and new training settings. See {@link Builder}.
 *
 * <pre>{@code
 * MultiLayerNetwork tuned = new TransferLearning.Builder(pretrained)
 *     .fineTuneConfiguration(new FineTuneConfiguration.Builder().updater(new Adam(1e-4)).seed(7).build())
 *     .setFeatureExtractor(1)              // layers 0 and 1 become FrozenLayers
 *     .removeOutputLayer()
 *     .addLayer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(5).activation(Activation.SOFTMAX).build())
 *     .build();
 * }</pre>
 */
public final class TransferLearning {
    private TransferLearning() {
    }

    /** A weight initialization: a scheme, or a distribution (scheme DISTRIBUTION). */
    static final class Init {
        final WeightInit scheme;
        final Distribution dist;

        private Init(WeightInit scheme, Distribution dist) {
            this.scheme = scheme;
            this.dist = dist;
        }

        static Init of(WeightInit scheme, String what) {
            Objects.requireNonNull(scheme, what);
            if (scheme == WeightInit.DISTRIBUTION) {
                throw new DL4JInvalidConfigException(what + " is WeightInit.DISTRIBUTION without a distribution: "
                        + "use the overload that takes a Distribution");
            }
            return new Init(scheme, null);
        }

        static Init of(Distribution dist, String what) {
            Objects.requireNonNull(dist, what);
            String p = dist.validate();
            if (p != null) {
                throw new DL4JInvalidConfigException(what + " " + p);
            }
            return new Init(WeightInit.DISTRIBUTION, dist.clone());
        }

        void applyTo(BaseLayer l) {
            l.setWeightInit(scheme);
            l.setWeightInitDistribution(dist == null ? null : dist.clone());
        }
    }

    /** One layer of the network being edited. */
    private static final class Slot {
        /** The layer configuration (owned by the builder). */
        Layer layer;
        /** Index in the original network, or -1 for a layer added by addLayer. */
        final int origIndex;
        /** Whether the layer's parameters are re-initialized rather than copied. */
        boolean reinit;
        /** A weight initialization that nOutReplace/nInReplace imposed (wins over the fine-tune one). */
        Init init;

        Slot(Layer layer, int origIndex, boolean reinit) {
            this.layer = layer;
            this.origIndex = origIndex;
            this.reinit = reinit;
        }

        Slot copy() {
            Slot s = new Slot(layer.clone(), origIndex, reinit);
            s.init = init;
            return s;
        }
    }

    /**
     * Builds a new {@link MultiLayerNetwork} from an initialized one. Edits apply in call order to the
     * list of layers (layer indices are those of the current list: removing and adding happen at the
     * output end, so an original layer keeps its index). {@link #build()} then
     * <ol>
     *   <li>wraps layers {@code 0..n} of {@link #setFeatureExtractor(int)} in {@link FrozenLayer}s
     *       (a layer already frozen stays as it is);</li>
     *   <li>applies the {@link FineTuneConfiguration} to every other layer kept from the original
     *       network, then the weight initialization given to nOutReplace/nInReplace;</li>
     *   <li>resolves added layers with the fine-tune settings as global values, infers unset
     *       {@code nIn}s and validates the configuration (seed and minibatch mode: the fine-tune
     *       ones, else the original's; counters start at 0);</li>
     *   <li>creates and initializes the new network from the seed, then copies the parameters of
     *       every kept, unchanged layer (frozen or not, batch-normalization running statistics
     *       included) from the original network. Changed and added layers keep their fresh
     *       parameters. The updater state is not copied: training starts with a fresh updater.</li>
     * </ol>
     * The original network is never modified. {@code build()} can be called more than once; each call
     * returns a new network, which the caller must close.
     *
     * <p>Invalid edits throw {@link DL4JInvalidConfigException} (an {@link IllegalArgumentException})
     * naming the layer and the problem, either at the call or at {@code build()}.
     */
    public static class Builder {
        private final MultiLayerNetwork origModel;
        private final MultiLayerConfiguration origConf;
        private final List<Slot> slots = new ArrayList<>();
        private FineTuneConfiguration fineTune;
        private int frozenTill = -1;
        private InputType inputType;

        /**
         * @param origModel the network to start from: initialized and open; it is read, never modified
         * @throws FerroIllegalArgumentException when it is closed or not initialized
         */
        public Builder(MultiLayerNetwork origModel) {
            this.origModel = checkUsable(Objects.requireNonNull(origModel, "origModel"));
            this.origConf = origModel.getLayerWiseConfigurations().clone();
            this.inputType = origConf.getInputType();
            List<Layer> layers = origConf.getLayers();
            for (int i = 0; i < layers.size(); i++) {
                slots.add(new Slot(layers.get(i).clone(), i, false));
            }
        }

        private static MultiLayerNetwork checkUsable(MultiLayerNetwork net) {
            if (net.isClosed()) {
                throw new FerroIllegalArgumentException("TransferLearning: the original network is closed");
            }
            if (!net.isInitCalled()) {
                throw new FerroIllegalArgumentException("TransferLearning: the original network is not initialized "
                        + "(call init() first; its parameters are copied into the new network)");
            }
            return net;
        }

        /**
         * Training settings imposed on the trainable layers kept from the original network and used as
         * the defaults of added layers (see {@link FineTuneConfiguration}).
         *
         * @param fineTuneConfiguration the settings (copied); null removes one set before
         * @return this builder
         */
        public Builder fineTuneConfiguration(FineTuneConfiguration fineTuneConfiguration) {
            this.fineTune = fineTuneConfiguration == null ? null : fineTuneConfiguration.clone();
            return this;
        }

        /**
         * Freezes layers {@code 0..layerNum}: they become {@link FrozenLayer}s, keep the original
         * parameters and run in inference mode. A later call replaces an earlier one.
         *
         * @param layerNum the last layer to freeze
         * @return this builder
         * @throws DL4JInvalidConfigException for an index out of range (checked again at build)
         */
        public Builder setFeatureExtractor(int layerNum) {
            checkIndex(layerNum, "setFeatureExtractor");
            this.frozenTill = layerNum;
            return this;
        }

        /**
         * Changes a layer's {@code nOut}; the layer and the next layer with parameters (whose
         * {@code nIn} follows) get new parameters initialized with {@code scheme}. Batch
         * normalization and layers without parameters in between follow the new size.
         *
         * @param layerNum index of a layer with {@code nOut} (dense, output, convolution, embedding)
         * @param nOut the new number of outputs
         * @param scheme weight initialization of both layers (not DISTRIBUTION: use the
         *     {@link Distribution} overload)
         * @return this builder
         * @throws DL4JInvalidConfigException for an index out of range, a layer without nOut, a frozen
         *     layer, or nOut &lt; 1
         */
        public Builder nOutReplace(int layerNum, int nOut, WeightInit scheme) {
            return nOutReplace(layerNum, nOut, scheme, scheme);
        }

        /**
         * As {@link #nOutReplace(int, int, WeightInit)}, with weights drawn from {@code dist}.
         *
         * @param layerNum layer index
         * @param nOut the new number of outputs
         * @param dist distribution of both layers' weights
         * @return this builder
         */
        public Builder nOutReplace(int layerNum, int nOut, Distribution dist) {
            return nOutReplace(layerNum, nOut, dist, dist);
        }

        /**
         * As {@link #nOutReplace(int, int, WeightInit)}, with a separate initialization of the next layer.
         *
         * @param layerNum layer index
         * @param nOut the new number of outputs
         * @param scheme weight initialization of layer {@code layerNum}
         * @param schemeNext weight initialization of the next layer with parameters
         * @return this builder
         */
        public Builder nOutReplace(int layerNum, int nOut, WeightInit scheme, WeightInit schemeNext) {
            return nOut(layerNum, nOut, Init.of(scheme, "scheme"), Init.of(schemeNext, "schemeNext"));
        }

        /**
         * As {@link #nOutReplace(int, int, WeightInit)}, with distributions.
         *
         * @param layerNum layer index
         * @param nOut the new number of outputs
         * @param dist distribution of layer {@code layerNum}'s weights
         * @param distNext distribution of the next layer's weights
         * @return this builder
         */
        public Builder nOutReplace(int layerNum, int nOut, Distribution dist, Distribution distNext) {
            return nOut(layerNum, nOut, Init.of(dist, "dist"), Init.of(distNext, "distNext"));
        }

        /**
         * As {@link #nOutReplace(int, int, WeightInit)}, with a distribution for the next layer.
         *
         * @param layerNum layer index
         * @param nOut the new number of outputs
         * @param scheme weight initialization of layer {@code layerNum}
         * @param distNext distribution of the next layer's weights
         * @return this builder
         */
        public Builder nOutReplace(int layerNum, int nOut, WeightInit scheme, Distribution distNext) {
            return nOut(layerNum, nOut, Init.of(scheme, "scheme"), Init.of(distNext, "distNext"));
        }

        /**
         * As {@link #nOutReplace(int, int, WeightInit)}, with a distribution for layer {@code layerNum}.
         *
         * @param layerNum layer index
         * @param nOut the new number of outputs
         * @param dist distribution of layer {@code layerNum}'s weights
         * @param schemeNext weight initialization of the next layer
         * @return this builder
         */
        public Builder nOutReplace(int layerNum, int nOut, Distribution dist, WeightInit schemeNext) {
            return nOut(layerNum, nOut, Init.of(dist, "dist"), Init.of(schemeNext, "schemeNext"));
        }

        private Builder nOut(int layerNum, int nOut, Init init, Init initNext) {
            FeedForwardLayer l = sizedLayer(layerNum, "nOutReplace", "nOut");
            if (nOut < 1) {
                throw new DL4JInvalidConfigException("nOutReplace: nOut must be at least 1, got " + nOut + " for "
                        + l.describe(layerNum));
            }
            l.setNOut((long) nOut);
            Slot s = slots.get(layerNum);
            s.reinit = true;
            s.init = init;
            for (int j = layerNum + 1; j < slots.size(); j++) {
                Slot next = slots.get(j);
                Layer nl = next.layer;
                if (nl instanceof FrozenLayer) {
                    throw new DL4JInvalidConfigException("nOutReplace(" + layerNum + ", ..): " + nl.describe(j)
                            + " would have to take the new size but it is frozen in the original network");
                }
                if (nl instanceof BatchNormalization) {
                    ((BatchNormalization) nl).setNIn((Long) null);
                    ((BatchNormalization) nl).setNOut((Long) null);
                    next.reinit = true;
                } else if (nl instanceof FeedForwardLayer) {
                    ((FeedForwardLayer) nl).setNIn((Long) null); // inferred from the new input at build
                    next.reinit = true;
                    next.init = initNext;
                    break;
                }
            }
            return this;
        }

        /**
         * Changes a layer's {@code nIn}; the layer gets new parameters initialized with {@code scheme}.
         * For layer 0 with a feed-forward input type, the input type follows.
         *
         * @param layerNum index of a layer with {@code nIn}
         * @param nIn the new number of inputs
         * @param scheme weight initialization (not DISTRIBUTION: use the {@link Distribution} overload)
         * @return this builder
         * @throws DL4JInvalidConfigException for an index out of range, a layer without nIn, a frozen
         *     layer, or nIn &lt; 1
         */
        public Builder nInReplace(int layerNum, int nIn, WeightInit scheme) {
            return nIn(layerNum, nIn, Init.of(scheme, "scheme"));
        }

        /**
         * As {@link #nInReplace(int, int, WeightInit)}, with weights drawn from {@code dist}.
         *
         * @param layerNum layer index
         * @param nIn the new number of inputs
         * @param dist distribution of the weights
         * @return this builder
         */
        public Builder nInReplace(int layerNum, int nIn, Distribution dist) {
            return nIn(layerNum, nIn, Init.of(dist, "dist"));
        }

        private Builder nIn(int layerNum, int nIn, Init init) {
            FeedForwardLayer l = sizedLayer(layerNum, "nInReplace", "nIn");
            if (nIn < 1) {
                throw new DL4JInvalidConfigException("nInReplace: nIn must be at least 1, got " + nIn + " for "
                        + l.describe(layerNum));
            }
            l.setNIn((long) nIn);
            Slot s = slots.get(layerNum);
            s.reinit = true;
            s.init = init;
            if (layerNum == 0 && inputType instanceof InputType.InputTypeFeedForward) {
                inputType = InputType.feedForward(nIn);
            }
            return this;
        }

        /** The layer at {@code layerNum} when it has sizes that nOutReplace/nInReplace can change. */
        private FeedForwardLayer sizedLayer(int layerNum, String op, String field) {
            checkIndex(layerNum, op);
            Layer l = slots.get(layerNum).layer;
            if (l instanceof FrozenLayer) {
                throw new DL4JInvalidConfigException(op + ": " + l.describe(layerNum)
                        + " is frozen in the original network; its " + field + " cannot change");
            }
            if (l instanceof BatchNormalization) {
                throw new DL4JInvalidConfigException(op + ": " + l.describe(layerNum) + " takes its size from its "
                        + "input; change the " + field + " of the layer before it instead");
            }
            if (!(l instanceof FeedForwardLayer)) {
                throw new DL4JInvalidConfigException(op + ": " + l.describe(layerNum) + " has no " + field
                        + " (only DenseLayer, OutputLayer, ConvolutionLayer, Convolution1DLayer and EmbeddingLayer "
                        + "have one)");
            }
            return (FeedForwardLayer) l;
        }

        private void checkIndex(int layerNum, String op) {
            if (layerNum < 0 || layerNum >= slots.size()) {
                throw new DL4JInvalidConfigException(op + ": layer index " + layerNum + " is out of range: the "
                        + "network has " + slots.size() + " layers" + (slots.isEmpty() ? ""
                        : " (0.." + (slots.size() - 1) + ")"));
            }
        }

        /**
         * Removes the last layer (the output layer); add a new one with {@link #addLayer(Layer)}.
         *
         * @return this builder
         * @throws DL4JInvalidConfigException when no layer is left
         */
        public Builder removeOutputLayer() {
            return removeLayersFromOutput(1);
        }

        /**
         * Removes the last {@code layerNum} layers.
         *
         * @param layerNum how many layers to remove from the output end
         * @return this builder
         * @throws DL4JInvalidConfigException when fewer layers are left or {@code layerNum} is negative
         */
        public Builder removeLayersFromOutput(int layerNum) {
            if (layerNum < 0 || layerNum > slots.size()) {
                throw new DL4JInvalidConfigException("removeLayersFromOutput(" + layerNum + "): the network has "
                        + slots.size() + " layers; remove between 0 and " + slots.size());
            }
            for (int i = 0; i < layerNum; i++) {
                slots.remove(slots.size() - 1);
            }
            return this;
        }

        /**
         * Appends a layer, initialized fresh. Its unset settings take the fine-tune values, then
         * {@link NeuralNetConfiguration.Builder}'s defaults; an unset {@code nIn} is inferred from the
         * previous layer.
         *
         * @param layer the layer configuration (copied)
         * @return this builder
         */
        public Builder addLayer(Layer layer) {
            slots.add(new Slot(Objects.requireNonNull(layer, "layer").clone(), -1, true));
            return this;
        }

        /**
         * The new network's input type (as {@code ListBuilder.setInputType}); by default the original
         * network's. Unset {@code nIn}s are inferred from it; set ones must match it.
         *
         * @param inputType the input type, or null: feed-forward of the first layer's nIn
         * @return this builder
         */
        public Builder setInputType(InputType inputType) {
            this.inputType = inputType;
            return this;
        }

        /** @return the new network's configuration, validated, without creating the network */
        private MultiLayerConfiguration buildConf(List<Slot> edited) {
            if (frozenTill >= edited.size()) {
                throw new DL4JInvalidConfigException("setFeatureExtractor(" + frozenTill + "): layer index out of "
                        + "range: the network has " + edited.size() + " layers after the removals");
            }
            for (int i = 0; i < edited.size(); i++) {
                Slot s = edited.get(i);
                if (i <= frozenTill) {
                    if (s.origIndex < 0) {
                        throw new DL4JInvalidConfigException("setFeatureExtractor(" + frozenTill + ") would freeze "
                                + s.layer.describe(i) + ", which addLayer added with fresh parameters; to add a "
                                + "frozen layer, add it wrapped in a FrozenLayer");
                    }
                    if (s.reinit) {
                        throw new DL4JInvalidConfigException("setFeatureExtractor(" + frozenTill + ") would freeze "
                                + s.layer.describe(i) + ", whose parameters are re-initialized by nOutReplace/"
                                + "nInReplace; freeze fewer layers or change a later one");
                    }
                    if (!(s.layer instanceof FrozenLayer)) {
                        s.layer = new FrozenLayer(s.layer);
                    }
                    continue;
                }
                if (s.origIndex >= 0 && fineTune != null) {
                    fineTune.applyToLayer(s.layer);
                }
                if (s.init != null && s.layer instanceof BaseLayer) {
                    s.init.applyTo((BaseLayer) s.layer);
                }
            }
            NeuralNetConfiguration.Builder globals = fineTune != null ? fineTune.appliedNeuralNetConfigurationBuilder()
                    : new NeuralNetConfiguration.Builder();
            if (fineTune == null || fineTune.getSeed() == null) {
                globals.seed(origConf.getSeed());
            }
            if (fineTune == null || fineTune.getMiniBatch() == null) {
                globals.miniBatch(origConf.isMiniBatch());
            }
            NeuralNetConfiguration.ListBuilder list = globals.list();
            for (Slot s : edited) {
                list.layer(s.layer);
            }
            list.setInputType(inputType);
            // the original's training mode of recurrent layers carries over, as in the reference
            list.backpropType(origConf.getBackpropType()).tBPTTForwardLength(origConf.getTbpttFwdLength())
                    .tBPTTBackwardLength(origConf.getTbpttBackLength());
            try {
                return list.build();
            } catch (DL4JInvalidConfigException e) {
                throw new DL4JInvalidConfigException("TransferLearning: the edited network is invalid: "
                        + e.getMessage(), e);
            }
        }

        /**
         * @return the new network: initialized, with the kept layers' parameters copied from the
         *     original (see the class description); close it when done
         * @throws DL4JInvalidConfigException when the edited configuration is invalid
         * @throws FerroIllegalArgumentException when the original network was closed meanwhile
         */
        public MultiLayerNetwork build() {
            checkUsable(origModel);
            List<Slot> edited = new ArrayList<>(slots.size());
            for (Slot s : slots) {
                edited.add(s.copy());
            }
            MultiLayerConfiguration conf = buildConf(edited);
            MultiLayerNetwork net = new MultiLayerNetwork(conf);
            try {
                net.init();
                copyParams(edited, net);
                return net;
            } catch (RuntimeException e) {
                net.close();
                throw e;
            }
        }

        /** Copies the parameters of every kept, unchanged layer from the original network. */
        private void copyParams(List<Slot> edited, MultiLayerNetwork net) {
            Map<Integer, Integer> origOf = new HashMap<>();
            for (int i = 0; i < edited.size(); i++) {
                Slot s = edited.get(i);
                if (s.origIndex >= 0 && !s.reinit) {
                    origOf.put(i, s.origIndex);
                }
            }
            if (origOf.isEmpty()) {
                return;
            }
            Map<String, INDArray> from = origModel.paramTable();
            Map<String, INDArray> to = net.paramTable();
            float[] flat = NDArray.internalData(net.params()).clone();
            int offset = 0;
            for (Map.Entry<String, INDArray> e : to.entrySet()) {
                String key = e.getKey();
                int len = Math.toIntExact(e.getValue().length());
                float[] fresh = NDArray.internalData(e.getValue());
                if (offset + len > flat.length || !Arrays.equals(flat, offset, offset + len, fresh, 0, len)) {
                    throw new IllegalStateException("TransferLearning: parameter " + key + " is not at offset "
                            + offset + " of params(); the parameter layout is not the one expected");
                }
                int cut = key.indexOf('_');
                Integer orig = origOf.get(Integer.parseInt(key.substring(0, cut)));
                if (orig != null) {
                    String origKey = orig + key.substring(cut);
                    INDArray src = from.get(origKey);
                    if (src == null || src.length() != len) {
                        throw new IllegalStateException("TransferLearning: parameter " + key + " (" + len
                                + " values) has no counterpart " + origKey + " of the same size in the original "
                                + "network");
                    }
                    System.arraycopy(NDArray.internalData(src), 0, flat, offset, len);
                }
                offset += len;
            }
            if (offset != flat.length) {
                throw new IllegalStateException("TransferLearning: the parameter table covers " + offset
                        + " values but the network has " + flat.length);
            }
            net.setParams(new NDArray(flat, 1, flat.length));
        }
    }

    /**
     * Builds a new {@link ComputationGraph} from an initialized one, editing by vertex name. Edits
     * apply in call order; {@link #build()}
     * <ol>
     *   <li>wraps the layers of the vertices named in {@link #setFeatureExtractor(String...)}, and of
     *       every vertex they depend on, in {@link FrozenLayer}s;</li>
     *   <li>applies the {@link FineTuneConfiguration} to every other layer kept from the original,
     *       then the weight initializations of nOutReplace/nInReplace;</li>
     *   <li>builds the configuration (added layers take the fine-tune settings as global values; the
     *       engine re-infers every cleared {@code nIn} and validates; counters start at 0);</li>
     *   <li>creates and initializes the new graph, then copies the parameters of every kept,
     *       unchanged layer vertex from the original by key ({@code "<vertex>_<param>"}). The updater
     *       state starts fresh.</li>
     * </ol>
     * The original graph is never modified; each {@code build()} returns a new graph to close.
     */
    public static class GraphBuilder {
        private final ComputationGraph origGraph;
        private final GraphEdit edit;

        /**
         * @param origGraph an initialized graph (read, never modified)
         * @throws FerroIllegalArgumentException when it is closed or not initialized
         */
        public GraphBuilder(ComputationGraph origGraph) {
            this.origGraph = checkUsable(Objects.requireNonNull(origGraph, "origGraph"));
            this.edit = new GraphEdit(origGraph.getConfiguration());
        }

        private static ComputationGraph checkUsable(ComputationGraph g) {
            if (g.isClosed()) {
                throw new FerroIllegalArgumentException("TransferLearning: the original graph is closed");
            }
            if (!g.isInitCalled()) {
                throw new FerroIllegalArgumentException("TransferLearning: the original graph is not initialized "
                        + "(call init() first; its parameters are copied into the new graph)");
            }
            return g;
        }

        /**
         * @param fineTuneConfiguration settings imposed on every kept, trainable layer and used as the
         *     global values of added layers
         * @return this builder
         */
        public GraphBuilder fineTuneConfiguration(FineTuneConfiguration fineTuneConfiguration) {
            edit.fineTuneConfiguration(Objects.requireNonNull(fineTuneConfiguration, "fineTuneConfiguration").clone());
            return this;
        }

        /**
         * Freezes the named layer vertices and every vertex they depend on.
         *
         * @param layerNames vertex names
         * @return this builder
         */
        public GraphBuilder setFeatureExtractor(String... layerNames) {
            edit.setFeatureExtractor(layerNames);
            return this;
        }

        /**
         * @param layerName a layer vertex
         * @param nOut its new size
         * @param scheme weight initialization of this layer and of the layers it feeds
         * @return this builder
         */
        public GraphBuilder nOutReplace(String layerName, int nOut, WeightInit scheme) {
            return nOutReplace(layerName, nOut, scheme, scheme);
        }

        /**
         * @param layerName a layer vertex
         * @param nOut its new size
         * @param dist weight distribution of this layer and of the layers it feeds
         * @return this builder
         */
        public GraphBuilder nOutReplace(String layerName, int nOut, Distribution dist) {
            return nOutReplace(layerName, nOut, dist, dist);
        }

        /**
         * Sets a layer's nOut and re-initializes it; the layers it feeds (directly, or through vertices
         * and layers without weights) get their nIn re-inferred and are re-initialized.
         *
         * @param layerName a layer vertex
         * @param nOut its new size
         * @param scheme weight initialization of this layer
         * @param schemeNext weight initialization of the layers it feeds
         * @return this builder
         */
        public GraphBuilder nOutReplace(String layerName, int nOut, WeightInit scheme, WeightInit schemeNext) {
            edit.nOutReplace(layerName, nOut, Init.of(scheme, "scheme"), Init.of(schemeNext, "schemeNext"));
            return this;
        }

        /**
         * @param layerName a layer vertex
         * @param nOut its new size
         * @param dist weight distribution of this layer
         * @param distNext weight distribution of the layers it feeds
         * @return this builder
         */
        public GraphBuilder nOutReplace(String layerName, int nOut, Distribution dist, Distribution distNext) {
            edit.nOutReplace(layerName, nOut, Init.of(dist, "dist"), Init.of(distNext, "distNext"));
            return this;
        }

        /**
         * @param layerName a layer vertex
         * @param nOut its new size
         * @param scheme weight initialization of this layer
         * @param distNext weight distribution of the layers it feeds
         * @return this builder
         */
        public GraphBuilder nOutReplace(String layerName, int nOut, WeightInit scheme, Distribution distNext) {
            edit.nOutReplace(layerName, nOut, Init.of(scheme, "scheme"), Init.of(distNext, "distNext"));
            return this;
        }

        /**
         * @param layerName a layer vertex
         * @param nOut its new size
         * @param dist weight distribution of this layer
         * @param schemeNext weight initialization of the layers it feeds
         * @return this builder
         */
        public GraphBuilder nOutReplace(String layerName, int nOut, Distribution dist, WeightInit schemeNext) {
            edit.nOutReplace(layerName, nOut, Init.of(dist, "dist"), Init.of(schemeNext, "schemeNext"));
            return this;
        }

        /**
         * Sets a layer's nIn and re-initializes it.
         *
         * @param layerName a layer vertex
         * @param nIn its new input size
         * @param scheme its weight initialization
         * @return this builder
         */
        public GraphBuilder nInReplace(String layerName, int nIn, WeightInit scheme) {
            edit.nInReplace(layerName, nIn, Init.of(scheme, "scheme"));
            return this;
        }

        /**
         * @param layerName a layer vertex
         * @param nIn its new input size
         * @param dist its weight distribution
         * @return this builder
         */
        public GraphBuilder nInReplace(String layerName, int nIn, Distribution dist) {
            edit.nInReplace(layerName, nIn, Init.of(dist, "dist"));
            return this;
        }

        /**
         * Removes a vertex but keeps its connections: other vertices (and the outputs) still name it,
         * so a replacement must be added under the same name.
         *
         * @param vertexName the vertex
         * @return this builder
         */
        public GraphBuilder removeVertexKeepConnections(String vertexName) {
            edit.removeVertexKeepConnections(vertexName);
            return this;
        }

        /**
         * Removes a vertex and every reference to it (other vertices' inputs, the outputs).
         *
         * @param vertexName the vertex
         * @return this builder
         */
        public GraphBuilder removeVertexAndConnections(String vertexName) {
            edit.removeVertexAndConnections(vertexName);
            return this;
        }

        /**
         * Adds a layer with fresh parameters (several inputs: merged first, as in the graph builder).
         *
         * @param layerName the vertex name
         * @param layer the layer
         * @param layerInputs input names
         * @return this builder
         */
        public GraphBuilder addLayer(String layerName, Layer layer, String... layerInputs) {
            return addLayer(layerName, layer, null, layerInputs);
        }

        /**
         * @param layerName the vertex name
         * @param layer the layer
         * @param preProcessor applied to its input, or null
         * @param layerInputs input names
         * @return this builder
         */
        public GraphBuilder addLayer(String layerName, Layer layer, InputPreProcessor preProcessor,
                                     String... layerInputs) {
            if (layerInputs != null && layerInputs.length > 1) {
                edit.addVertex(layerName + "-merge", new org.ferrodl.nn.conf.graph.MergeVertex(), layerInputs);
                layerInputs = new String[] {layerName + "-merge"};
            }
            edit.addLayer(layerName, layer, preProcessor, layerInputs);
            return this;
        }

        /**
         * @param vertexName the vertex name
         * @param vertex the vertex
         * @param vertexInputs input names
         * @return this builder
         */
        public GraphBuilder addVertex(String vertexName, GraphVertex vertex, String... vertexInputs) {
            edit.addVertex(vertexName, vertex, vertexInputs);
            return this;
        }

        /**
         * @param inputNames network inputs to add
         * @return this builder
         */
        public GraphBuilder addInputs(String... inputNames) {
            edit.addInputs(inputNames);
            return this;
        }

        /**
         * @param inputTypes one input type per network input
         * @return this builder
         */
        public GraphBuilder setInputTypes(InputType... inputTypes) {
            edit.setInputTypes(inputTypes);
            return this;
        }

        /**
         * @param outputNames the network outputs, replacing the original ones
         * @return this builder
         */
        public GraphBuilder setOutputs(String... outputNames) {
            edit.setOutputs(outputNames);
            return this;
        }

        /**
         * @return the new graph: initialized, with every kept layer's parameters copied from the
         *     original; close it when done
         * @throws DL4JInvalidConfigException when the edited graph is invalid (naming the vertex)
         * @throws FerroIllegalArgumentException when the original graph was closed meanwhile
         */
        public ComputationGraph build() {
            checkUsable(origGraph);
            GraphEdit.Result r = edit.build();
            ComputationGraph net = new ComputationGraph(r.conf);
            try {
                net.init();
                net.setParams(GraphEdit.copyKeptParameters(origGraph.paramTable(), net.paramTable(), r.keptParameters));
                return net;
            } catch (RuntimeException e) {
                net.close();
                throw e;
            }
        }
    }
}
