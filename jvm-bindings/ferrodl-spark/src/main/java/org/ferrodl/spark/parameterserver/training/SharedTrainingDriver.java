package org.ferrodl.spark.parameterserver.training;

import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;

/** Runs one gradient-sharing fit: relay on the driver, workers in mapPartitions (work in progress). */
final class SharedTrainingDriver {
    private SharedTrainingDriver() {}

    /** Trains {@code network} on {@code data}; returns the fit's statistics (null when not collected). */
    static SparkTrainingStats run(SharedTrainingMaster master, SparkDl4jMultiLayer network, JavaRDD<DataSet> data) {
        throw new UnsupportedOperationException("SharedTrainingMaster training is not wired yet");
    }
}
