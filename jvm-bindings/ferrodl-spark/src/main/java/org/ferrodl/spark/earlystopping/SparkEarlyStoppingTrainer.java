package org.ferrodl.spark.earlystopping;

import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.trainer.BaseEarlyStoppingTrainer;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;

/**
 * Early stopping with distributed training: each epoch is one {@link SparkDl4jMultiLayer#fit}
 * of the training RDD with the given master; the iteration termination conditions are checked
 * after each such fit with its score ({@link SparkDl4jMultiLayer#getScore()}, the mean of the
 * workers' last minibatch scores), since workers' individual minibatches are not seen by the
 * driver. Scoring, saving and the epoch conditions are those of {@link BaseEarlyStoppingTrainer};
 * use {@link SparkDataSetLossCalculator} to score on Spark too.
 */
public class SparkEarlyStoppingTrainer
        extends BaseSparkEarlyStoppingTrainer<MultiLayerNetwork, DataSet, SparkDl4jMultiLayer> {

    public SparkEarlyStoppingTrainer(SparkContext sc, TrainingMaster<?, ?> trainingMaster,
                                     EarlyStoppingConfiguration<MultiLayerNetwork> esConfig, MultiLayerNetwork net,
                                     JavaRDD<DataSet> train) {
        this(new JavaSparkContext(sc), trainingMaster, esConfig, net, train);
    }

    public SparkEarlyStoppingTrainer(JavaSparkContext sc, TrainingMaster<?, ?> trainingMaster,
                                     EarlyStoppingConfiguration<MultiLayerNetwork> esConfig, MultiLayerNetwork net,
                                     JavaRDD<DataSet> train) {
        super(esConfig, net, new SparkDl4jMultiLayer(sc, net, Objects.requireNonNull(trainingMaster,
                "trainingMaster")), train);
    }

    @Override
    void fit(SparkDl4jMultiLayer sparkNetwork, JavaRDD<DataSet> train) {
        sparkNetwork.fit(train);
    }
}
