package org.ferrodl.optimize.solvers.accumulation.encoding;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.FixedThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm;

/**
 * Decides the threshold of gradient sharing's update encoding at each step (Strom 2015): entries
 * of a worker's residual with magnitude at or above it are sent as ±threshold. The algorithm runs
 * natively in each worker; this object is its configuration. Per-worker thresholds are averaged at
 * the end of a fit and carried into the next fit of the same network.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = AdaptiveThresholdAlgorithm.class, name = "adaptive"),
    @JsonSubTypes.Type(value = TargetSparsityThresholdAlgorithm.class, name = "targetSparsity"),
    @JsonSubTypes.Type(value = FixedThresholdAlgorithm.class, name = "fixed"),
})
public interface ThresholdAlgorithm extends Serializable {

    /** This configuration in the JSON the native encoder reads (docs/UPDATE_FORMAT.md). */
    String toNativeJson();
}
