package org.ferrodl.jni;

import static org.ferrodl.nn.conf.ConfTestSupport.allBaseOptions;
import static org.ferrodl.nn.conf.ConfTestSupport.network;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.AMSGrad;
import org.ferrodl.linalg.learning.config.AdaDelta;
import org.ferrodl.linalg.learning.config.AdaGrad;
import org.ferrodl.linalg.learning.config.AdaMax;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.learning.config.Nadam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.NoOp;
import org.ferrodl.linalg.learning.config.RmsProp;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.linalg.lossfunctions.impl.LossMSE;
import org.ferrodl.linalg.schedule.ExponentialSchedule;
import org.ferrodl.linalg.schedule.MapSchedule;
import org.ferrodl.linalg.schedule.ScheduleType;
import org.ferrodl.linalg.schedule.StepSchedule;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.Convolution1DLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.DropoutLayer;
import org.ferrodl.nn.conf.layers.EmbeddingLayer;
import org.ferrodl.nn.conf.layers.GlobalPoolingLayer;
import org.ferrodl.nn.conf.layers.LossLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.PoolingType;
import org.ferrodl.nn.conf.layers.Subsampling1DLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.Upsampling2D;
import org.ferrodl.nn.conf.layers.ZeroPaddingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;

/**
 * The configuration contract across the boundary (ARCHITECTURE.md §2): what the Java builders write,
 * the engine parses (it refuses unknown fields), builds with the expected parameter count, and writes
 * back as the same configuration.
 */
class ConfigurationContractTest {

    /** Creates the native network, checks its size and that its configuration comes back unchanged. */
    private static void crossesTheBoundary(String what, MultiLayerConfiguration c, long expectedParams) {
        long h = NativeNetwork.create(c.toJson());
        try {
            assertEquals(expectedParams, NativeNetwork.numParams(h), what + ": parameter count");
            MultiLayerConfiguration back = MultiLayerConfiguration.fromJson(NativeNetwork.configurationJson(h));
            assertEquals(c, back, what + ": configuration written back by the engine");
        } finally {
            NativeNetwork.destroy(h);
        }
    }

    private static LossLayer mseLoss() {
        return new LossLayer.Builder(LossFunction.MSE).build();
    }

    @Test
    void everyLayerTypeWithEveryOption() {
        crossesTheBoundary("dense chain", network(null,
                allBaseOptions(new DenseLayer.Builder()).nIn(4).nOut(6).hasBias(false).build(),
                new ActivationLayer.Builder().name("act").dropOut(0.4).activation(Activation.RELU6).build(),
                new DropoutLayer.Builder(0.6).name("drop").build(),
                allBaseOptions(new BatchNormalization.Builder()).nIn(6).nOut(6).decay(0.8).eps(1e-3)
                        .lockGammaBeta(false).gamma(2.0).beta(0.5).build(),
                new FrozenLayer(new DenseLayer.Builder().nIn(6).nOut(5).build()),
                allBaseOptions(new OutputLayer.Builder(new LossMSE(Nd4j.createFromArray(1.0, 2.0, 3.0))))
                        .nIn(5).nOut(3).build()),
                4 * 6 + 4 * 6 + (6 * 5 + 5) + (5 * 3 + 3));
        crossesTheBoundary("convolutional chain", network(InputType.convolutional(9, 8, 2),
                allBaseOptions(new ConvolutionLayer.Builder(3, 2)).nIn(2).nOut(3).stride(2, 1).padding(1, 0)
                        .dilation(1, 2).convolutionMode(ConvolutionMode.Same).hasBias(false).build(),
                new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.PNORM).kernelSize(2, 2).stride(1, 1)
                        .padding(1, 1).pnorm(3).name("pool").dropOut(0.5).build(),
                new Upsampling2D.Builder().size(new int[] {2, 3}).name("up").build(),
                new ZeroPaddingLayer.Builder(1, 2, 3, 4).name("pad").build(),
                new GlobalPoolingLayer.Builder(PoolingType.AVG).name("gp").build(),
                mseLoss()),
                3 * 2 * 3 * 2);
        crossesTheBoundary("recurrent chain", network(InputType.recurrent(3, 13),
                allBaseOptions(new Convolution1DLayer.Builder(3, 2, 1)).nIn(3).nOut(4).build(),
                new Subsampling1DLayer.Builder(PoolingType.SUM, 2, 1, 0).name("p1").build(),
                new Convolution1DLayer.Builder(2).nOut(2).convolutionMode(ConvolutionMode.Causal).build(),
                new GlobalPoolingLayer.Builder(PoolingType.MAX).build(),
                mseLoss()),
                (3 * 4 * 3 + 4) + (4 * 2 * 2 + 2));
        crossesTheBoundary("embedding", network(null,
                allBaseOptions(new EmbeddingLayer.Builder()).nIn(10).nOut(4).hasBias(true).build(),
                new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build()),
                10 * 4 + 4 + 4 * 3 + 3);
    }

    @Test
    void everyActivationLossWeightInitAndUpdater() {
        List<IUpdater> updaters = List.of(new Sgd(0.1), new Adam(new StepSchedule(ScheduleType.ITERATION, 0.1, 0.5, 10)),
                new AdaMax(0.01), new Nadam(0.01), new AMSGrad(0.01), new RmsProp(0.01), new Nesterovs(0.1, 0.8),
                new AdaGrad(0.1), new AdaDelta(), new NoOp(),
                new Sgd(new ExponentialSchedule(ScheduleType.EPOCH, 0.1, 0.9)),
                new Sgd(new MapSchedule(ScheduleType.EPOCH, Map.of(0, 0.1, 5, 0.01))));
        List<MultiLayerConfiguration> confs = new ArrayList<>();
        Activation[] acts = Activation.values();
        LossFunction[] losses = LossFunction.values();
        WeightInit[] inits = WeightInit.values();
        int n = Math.max(Math.max(acts.length, losses.length), Math.max(inits.length, updaters.size()));
        for (int i = 0; i < n; i++) {
            WeightInit wi = inits[i % inits.length];
            DenseLayer.Builder hidden = new DenseLayer.Builder().nIn(5).nOut(5).activation(acts[i % acts.length])
                    .updater(updaters.get(i % updaters.size()));
            if (wi == WeightInit.DISTRIBUTION) {
                hidden.weightInit(new org.ferrodl.nn.conf.distribution.UniformDistribution(-0.5, 0.5));
            } else {
                hidden.weightInit(wi);
            }
            LossFunction loss = losses[i % losses.length];
            Activation out = loss == LossFunction.MCXENT || loss == LossFunction.NEGATIVELOGLIKELIHOOD
                    || loss == LossFunction.KL_DIVERGENCE ? Activation.SOFTMAX : Activation.SIGMOID;
            confs.add(new NeuralNetConfiguration.Builder().seed(i).list()
                    .layer(hidden.build())
                    .layer(new OutputLayer.Builder(loss).nIn(5).nOut(3).activation(out).build())
                    .build());
        }
        for (int i = 0; i < confs.size(); i++) {
            crossesTheBoundary("combination " + i, confs.get(i), 5 * 5 + 5 + 5 * 3 + 3);
        }
    }
}
