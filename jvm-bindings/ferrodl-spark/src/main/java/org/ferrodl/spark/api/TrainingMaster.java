package org.ferrodl.spark.api;

import java.io.Serializable;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.core.loader.DataSetLoader;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.spark.impl.common.LoadFunctions;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;

/**
 * A strategy for distributed training of a {@link SparkDl4jMultiLayer}: how data is split among
 * workers and how their results are combined. Implementations are serializable configuration
 * objects; all per-fit state lives inside {@link #executeTraining} so two fits never share it.
 */
public interface TrainingMaster extends Serializable {

    /** Trains {@code network}'s model on {@code trainingData}, updating the network in place. */
    void executeTraining(SparkDl4jMultiLayer network, JavaRDD<DataSet> trainingData);

    /**
     * Trains on DataSets stored at {@code trainingDataPaths}, read on the executors with
     * {@code loader}. The default loads the files lazily and trains as from an RDD of DataSets;
     * masters that can deal paths instead of data override it.
     */
    default void executeTrainingPaths(SparkDl4jMultiLayer network, JavaRDD<String> trainingDataPaths,
                                      DataSetLoader loader) {
        executeTraining(network, LoadFunctions.load(network.getSparkContext(), trainingDataPaths, loader));
    }

    /**
     * Examples in each DataSet object of the training RDD, as configured; used to group MLlib
     * labeled points into DataSets of that size ({@code fitLabeledPoint}). Default 1.
     */
    default int getRddDataSetNumExamples() {
        return 1;
    }

    /** This master's configuration as JSON. */
    String toJson();

    /** This master's configuration as YAML. */
    String toYaml();

    /** Enables or disables the collection of training statistics. */
    void setCollectTrainingStats(boolean collectTrainingStats);

    /** Whether training statistics are collected. */
    boolean getIsCollectTrainingStats();

    /** Statistics of the last fit, or {@code null} when collection is disabled. */
    SparkTrainingStats getTrainingStats();
}
