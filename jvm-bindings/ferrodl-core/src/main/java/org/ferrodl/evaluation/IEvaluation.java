package org.ferrodl.evaluation;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.EvaluationBinary;
import org.ferrodl.evaluation.classification.EvaluationCalibration;
import org.ferrodl.evaluation.classification.ROC;
import org.ferrodl.evaluation.classification.ROCBinary;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;

/**
 * An evaluation metric that is accumulated over minibatches and merged across parts of the data:
 * evaluating parts separately and merging the results gives the same counts as evaluating
 * everything in one object (this is how Spark evaluates, one object per partition). Every
 * implementation round-trips through {@link #toJson()} / {@link #fromJson(String, Class)}.
 *
 * @param <T> the implementing class (what {@link #merge} accepts)
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "@evaluation")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Evaluation.class, name = "Evaluation"),
    @JsonSubTypes.Type(value = EvaluationBinary.class, name = "EvaluationBinary"),
    @JsonSubTypes.Type(value = EvaluationCalibration.class, name = "EvaluationCalibration"),
    @JsonSubTypes.Type(value = ROC.class, name = "ROC"),
    @JsonSubTypes.Type(value = ROCBinary.class, name = "ROCBinary"),
    @JsonSubTypes.Type(value = ROCMultiClass.class, name = "ROCMultiClass"),
    @JsonSubTypes.Type(value = RegressionEvaluation.class, name = "RegressionEvaluation"),
})
public interface IEvaluation<T extends IEvaluation<T>> extends Serializable {

    /** Counts one minibatch without a mask. */
    default void eval(INDArray labels, INDArray networkPredictions) {
        eval(labels, networkPredictions, null);
    }

    /**
     * Counts one minibatch.
     *
     * @param labels {@code N × C} labels
     * @param networkPredictions {@code N × C} network output
     * @param maskArray null, a per-example mask ({@code [N]} or {@code N × 1}) or, where the class
     *     says so, a per-output mask ({@code N × C}); entries whose mask is 0 are skipped
     */
    void eval(INDArray labels, INDArray networkPredictions, INDArray maskArray);

    /**
     * Counts a minibatch of time series: every (example, time step) is one labelled prediction.
     *
     * @param labels {@code [N, C, T]} labels (NCW)
     * @param predictions {@code [N, C, T]} network output
     */
    default void evalTimeSeries(INDArray labels, INDArray predictions) {
        evalTimeSeries(labels, predictions, null);
    }

    /**
     * Counts a minibatch of time series, skipping the (example, time step) pairs whose mask is 0 (the
     * padding of variable-length sequences), as the reference does.
     *
     * @param labels {@code [N, C, T]} labels (NCW)
     * @param predictions {@code [N, C, T]} network output
     * @param labelsMask null or {@code [N, T]}
     * @throws IllegalArgumentException for shapes that are not rank 3 and equal, or a mask that is not [N, T]
     */
    default void evalTimeSeries(INDArray labels, INDArray predictions, INDArray labelsMask) {
        INDArray[] rows = EvalInputs.timeSeriesRows(labels, predictions, labelsMask, getClass().getSimpleName());
        eval(rows[0], rows[1], null);
    }

    /** Adds {@code other}'s counts into this evaluation (which must be configured the same way). */
    void merge(T other);

    /** Forgets everything counted (the configuration stays). */
    void reset();

    /** A human-readable summary. */
    String stats();

    /** This evaluation (configuration and counts) as JSON. */
    default String toJson() {
        return EvaluationJson.toJson(this);
    }

    /** This evaluation (configuration and counts) as YAML. */
    default String toYaml() {
        return EvaluationJson.toYaml(this);
    }

    /**
     * Reads an evaluation written by {@link #toJson()}.
     *
     * @param json the JSON
     * @param type the expected class ({@code IEvaluation.class} accepts any)
     * @throws IllegalArgumentException for malformed JSON, unknown fields or another class
     */
    static <E extends IEvaluation<?>> E fromJson(String json, Class<E> type) {
        return EvaluationJson.fromJson(json, type);
    }

    /** Reads an evaluation written by {@link #toYaml()}. */
    static <E extends IEvaluation<?>> E fromYaml(String yaml, Class<E> type) {
        return EvaluationJson.fromYaml(yaml, type);
    }
}
