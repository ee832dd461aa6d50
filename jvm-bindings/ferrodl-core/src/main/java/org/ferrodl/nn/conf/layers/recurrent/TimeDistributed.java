package org.ferrodl.nn.conf.layers.recurrent;

import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.RNNFormat;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.layers.recurrent.LastTimeStep.NameOnly;
import org.ferrodl.nn.conf.layers.util.MaskZeroLayer;
import org.ferrodl.nn.conf.layers.wrapper.BaseWrapperLayer;

/**
 * Applies a feed-forward layer (e.g. a DenseLayer) to every time step of a
 * {@code [minibatch, size, timeSteps]} input independently, with the same parameters at every step
 * (the reference's {@code TimeDistributed}); the output is again a time series.
 *
 * <pre>{@code new TimeDistributed(new DenseLayer.Builder().nIn(32).nOut(16).build())}</pre>
 */
public class TimeDistributed extends BaseWrapperLayer {
    private static final long serialVersionUID = 1L;

    /** Layout of the input and output. */
    protected RNNFormat rnnDataFormat = RNNFormat.NCW;

    /** For deserialization. */
    protected TimeDistributed() {
    }

    /**
     * @param underlying the feed-forward layer applied at each step (copied)
     * @throws DL4JInvalidConfigException when it is a recurrent layer or a wrapper
     */
    public TimeDistributed(Layer underlying) {
        this(underlying, RNNFormat.NCW);
    }

    /**
     * @param underlying the feed-forward layer applied at each step (copied)
     * @param rnnDataFormat layout of the input and output
     * @throws DL4JInvalidConfigException when it is a recurrent layer or a wrapper
     */
    public TimeDistributed(Layer underlying, RNNFormat rnnDataFormat) {
        super(new NameOnly(), underlying);
        this.rnnDataFormat = Objects.requireNonNull(rnnDataFormat, "rnnDataFormat");
    }

    @Override
    protected String wrapProblem(Layer l) {
        if (LayerWrappers.isRecurrent(l) || l instanceof TimeDistributed || l instanceof MaskZeroLayer
                || LayerWrappers.inner(l) != null) {
            return "can only wrap a feed-forward layer (applied at each time step), got " + l.getClass().getSimpleName();
        }
        return null;
    }

    /** @return the layout of the input and output (default NCW) */
    public RNNFormat getRnnDataFormat() {
        return rnnDataFormat;
    }

    /** @param rnnDataFormat the layout of the input and output */
    public void setRnnDataFormat(RNNFormat rnnDataFormat) {
        this.rnnDataFormat = rnnDataFormat;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (rnnDataFormat == null) {
            throw missing(who, "rnnDataFormat");
        }
    }

    @Override
    public TimeDistributed clone() {
        return (TimeDistributed) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && ((TimeDistributed) o).rnnDataFormat == rnnDataFormat;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), rnnDataFormat);
    }
}
