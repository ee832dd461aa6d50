package org.ferrodl.nn.conf.distribution;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;

/**
 * A distribution to draw initial weights from ({@code weightInit(Distribution)}, which also sets
 * {@code WeightInit.DISTRIBUTION}). JSON: {@code {"type":"normal","mean","std"}},
 * {@code {"type":"uniform","lower","upper"}}, {@code {"type":"truncatedNormal","mean","std"}}.
 *
 * <p>Implementations are immutable value objects.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = NormalDistribution.class, name = "normal"),
    @JsonSubTypes.Type(value = UniformDistribution.class, name = "uniform"),
    @JsonSubTypes.Type(value = TruncatedNormalDistribution.class, name = "truncatedNormal")
})
public abstract class Distribution implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    /** For subclasses. */
    protected Distribution() {
    }

    /**
     * Checks the parameters.
     *
     * @return null when valid, else a description of the problem
     */
    public abstract String validate();

    @Override
    public Distribution clone() {
        try {
            return (Distribution) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}
