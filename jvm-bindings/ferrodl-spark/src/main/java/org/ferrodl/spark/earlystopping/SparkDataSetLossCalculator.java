package org.ferrodl.spark.earlystopping;

import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.earlystopping.scorecalc.ScoreCalculator;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;

/**
 * The network's loss on an RDD of held-out data, computed on Spark
 * ({@link SparkDl4jMultiLayer#calculateScore(JavaRDD, boolean)}): averaged per example or summed.
 * Lower is better.
 */
public class SparkDataSetLossCalculator implements ScoreCalculator<MultiLayerNetwork> {
    private static final long serialVersionUID = 1L;

    private final transient JavaRDD<DataSet> data;
    private final boolean average;
    private final transient JavaSparkContext sc;

    public SparkDataSetLossCalculator(JavaRDD<DataSet> data, boolean average, SparkContext sc) {
        this(data, average, new JavaSparkContext(sc));
    }

    public SparkDataSetLossCalculator(JavaRDD<DataSet> data, boolean average, JavaSparkContext sc) {
        this.data = Objects.requireNonNull(data, "data");
        this.average = average;
        this.sc = Objects.requireNonNull(sc, "sc");
    }

    @Override
    public double calculateScore(MultiLayerNetwork network) {
        return new SparkDl4jMultiLayer(sc, network).calculateScore(data, average);
    }

    @Override
    public boolean minimizeScore() {
        return true;
    }

    @Override
    public String toString() {
        return "SparkDataSetLossCalculator(average=" + average + ")";
    }
}
