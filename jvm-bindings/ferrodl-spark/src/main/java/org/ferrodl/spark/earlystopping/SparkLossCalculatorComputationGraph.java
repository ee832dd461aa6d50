package org.ferrodl.spark.earlystopping;

import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.ferrodl.earlystopping.scorecalc.ScoreCalculator;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.spark.impl.graph.SparkComputationGraph;

/**
 * A graph's loss on an RDD of held-out MultiDataSets, computed on Spark
 * ({@link SparkComputationGraph#calculateScoreMultiDataSet(JavaRDD, boolean)}): averaged per example
 * or summed. Lower is better.
 */
public class SparkLossCalculatorComputationGraph implements ScoreCalculator<ComputationGraph> {
    private static final long serialVersionUID = 1L;

    private final transient JavaRDD<MultiDataSet> data;
    private final boolean average;
    private final transient JavaSparkContext sc;

    public SparkLossCalculatorComputationGraph(JavaRDD<MultiDataSet> data, boolean average, SparkContext sc) {
        this(data, average, new JavaSparkContext(sc));
    }

    public SparkLossCalculatorComputationGraph(JavaRDD<MultiDataSet> data, boolean average, JavaSparkContext sc) {
        this.data = Objects.requireNonNull(data, "data");
        this.average = average;
        this.sc = Objects.requireNonNull(sc, "sc");
    }

    @Override
    public double calculateScore(ComputationGraph network) {
        return new SparkComputationGraph(sc, network).calculateScoreMultiDataSet(data, average);
    }

    @Override
    public boolean minimizeScore() {
        return true;
    }

    @Override
    public String toString() {
        return "SparkLossCalculatorComputationGraph(average=" + average + ")";
    }
}
