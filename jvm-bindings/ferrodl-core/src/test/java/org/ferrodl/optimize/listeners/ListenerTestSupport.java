package org.ferrodl.optimize.listeners;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;

/** A small regression network, data, and a log capture. */
final class ListenerTestSupport {
    private ListenerTestSupport() {
    }

    static MultiLayerConfiguration regression() {
        return new NeuralNetConfiguration.Builder().seed(3).updater(new Sgd(0.05)).list()
                .layer(new DenseLayer.Builder().nIn(4).nOut(16).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MSE).nIn(16).nOut(1).activation(Activation.IDENTITY)
                        .build())
                .build();
    }

    static DataSet data(int n) {
        return new DataSet(Nd4j.rand(7, new long[] {n, 4}), Nd4j.rand(8, new long[] {n, 1}));
    }

    /** Collects the messages a logger writes while installed; remove with {@link #close()}. */
    static final class LogCapture extends Handler implements AutoCloseable {
        final List<String> messages = new ArrayList<>();
        private final Logger logger;

        LogCapture(Class<?> c) {
            logger = Logger.getLogger(c.getName());
            logger.addHandler(this);
            setLevel(Level.ALL);
        }

        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.INFO.intValue()) {
                messages.add(record.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }
}
