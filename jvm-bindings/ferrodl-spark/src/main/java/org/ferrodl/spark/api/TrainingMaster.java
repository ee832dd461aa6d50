package org.ferrodl.spark.api;

import java.io.Serializable;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;

/**
 * A strategy for distributed training of a {@link SparkDl4jMultiLayer}: how data is split among
 * workers and how their results are combined. Implementations are serializable configuration
 * objects; all per-fit state lives inside {@link #executeTraining} so two fits never share it.
 */
public interface TrainingMaster extends Serializable {

    /** Trains {@code network}'s model on {@code trainingData}, updating the network in place. */
    void executeTraining(SparkDl4jMultiLayer network, JavaRDD<DataSet> trainingData);

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
