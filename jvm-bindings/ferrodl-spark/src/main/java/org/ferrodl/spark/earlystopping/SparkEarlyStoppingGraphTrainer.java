package org.ferrodl.spark.earlystopping;

import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.termination.IterationTerminationCondition;
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
public class SparkEarlyStoppingGraphTrainer extends BaseEarlyStoppingTrainer<ComputationGraph> {
    private final SparkComputationGraph sparkGraph;
    private final JavaRDD<MultiDataSet> train;

    public SparkEarlyStoppingGraphTrainer(SparkContext sc, TrainingMaster<?, ?> trainingMaster,
                                          EarlyStoppingConfiguration<ComputationGraph> esConfig, ComputationGraph net,
                                          JavaRDD<MultiDataSet> train) {
        this(new JavaSparkContext(sc), trainingMaster, esConfig, net, train);
    }

    public SparkEarlyStoppingGraphTrainer(JavaSparkContext sc, TrainingMaster<?, ?> trainingMaster,
                                          EarlyStoppingConfiguration<ComputationGraph> esConfig, ComputationGraph net,
                                          JavaRDD<MultiDataSet> train) {
        super(esConfig, net);
        this.sparkGraph = new SparkComputationGraph(sc, net, Objects.requireNonNull(trainingMaster, "trainingMaster"));
        this.train = Objects.requireNonNull(train, "train");
    }

    /** The Spark wrapper that trains the graph (e.g. for its training statistics). */
    public SparkComputationGraph getSparkNetwork() {
        return sparkGraph;
    }

    @Override
    protected IterationTerminationCondition fitEpoch() {
        sparkGraph.fitMultiDataSet(train);
        return checkIteration(sparkGraph.getScore());
    }
}
