package org.ferrodl.optimize.solvers.accumulation.encoding;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.NoOpResidualPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.ResidualClippingPostProcessor;

/**
 * Modifies a worker's residual vector (what was not sent yet) after encoding, e.g. clipping it so
 * that stale mass cannot grow without bound. Runs natively in each worker; this object is its
 * configuration.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = ResidualClippingPostProcessor.class, name = "clipping"),
    @JsonSubTypes.Type(value = NoOpResidualPostProcessor.class, name = "noop"),
})
public interface ResidualPostProcessor extends Serializable {

    /** This configuration in the JSON the native encoder reads. */
    String toNativeJson();
}
