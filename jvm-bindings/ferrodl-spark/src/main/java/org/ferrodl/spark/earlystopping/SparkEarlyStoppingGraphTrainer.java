package org.ferrodl.spark.earlystopping;

import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.trainer.BaseEarlyStoppingTrainer;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;

/**
 * Early stopping of a {@link ComputationGraph} with distributed training: each epoch is one
 * {@link SparkComputationGraph#fitMultiDataSet(JavaRDD)} of the training RDD with the given
 * master; the iteration termination conditions are checked after each such fit with its score
 * (the mean of the workers' last minibatch scores), since the driver does not see the workers'
 * minibatches. Scoring, saving and the epoch conditions are those of
 * {@link BaseEarlyStoppingTrainer}; {@link SparkLossCalculatorComputationGraph} scores on Spark too.
 */
public class SparkEarlyStoppingGraphTrainer
        extends BaseSparkEarlyStoppingTrainer<ComputationGraph, MultiDataSet, SparkComputationGraph> {

    public SparkEarlyStoppingGraphTrainer(SparkContext sc, TrainingMaster<?, ?> trainingMaster,
                                          EarlyStoppingConfiguration<ComputationGraph> esConfig, ComputationGraph net,
                                          JavaRDD<MultiDataSet> train) {
        this(new JavaSparkContext(sc), trainingMaster, esConfig, net, train);
    }

    public SparkEarlyStoppingGraphTrainer(JavaSparkContext sc, TrainingMaster<?, ?> trainingMaster,
                                          EarlyStoppingConfiguration<ComputationGraph> esConfig, ComputationGraph net,
                                          JavaRDD<MultiDataSet> train) {
        super(esConfig, net, new SparkComputationGraph(sc, net, Objects.requireNonNull(trainingMaster,
                "trainingMaster")), train);
    }

    @Override
    void fit(SparkComputationGraph sparkNetwork, JavaRDD<MultiDataSet> train) {
        sparkNetwork.fitMultiDataSet(train);
    }
}
