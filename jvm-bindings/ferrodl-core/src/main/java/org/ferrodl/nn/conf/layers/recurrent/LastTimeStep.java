package org.ferrodl.nn.conf.layers.recurrent;

import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerWrappers;
import org.ferrodl.nn.conf.layers.wrapper.BaseWrapperLayer;

/**
 * Runs a recurrent layer and outputs only its activations at the last time step, as a feed-forward
 * {@code [minibatch, size]} output (the reference's {@code LastTimeStep}). With a features mask the
 * last step of each example is its last unmasked one (an example whose mask is all zero has no last
 * step and is refused).
 *
 * <pre>{@code new LastTimeStep(new LSTM.Builder().nIn(10).nOut(32).build())}</pre>
 */
public class LastTimeStep extends BaseWrapperLayer {
    private static final long serialVersionUID = 1L;

    /** For deserialization. */
    protected LastTimeStep() {
    }

    /**
     * @param underlying the recurrent layer (copied): LSTM, GravesLSTM, SimpleRnn, or a Bidirectional
     *     or MaskZeroLayer around one
     * @throws org.ferrodl.exception.DL4JInvalidConfigException when it is not a recurrent layer
     */
    public LastTimeStep(Layer underlying) {
        super(new NameOnly(), underlying);
    }

    @Override
    protected String wrapProblem(Layer l) {
        return LayerWrappers.isRecurrent(l) ? null : "can only wrap a recurrent layer (LSTM, GravesLSTM, SimpleRnn, "
                + "or a Bidirectional or MaskZeroLayer around one), got " + l.getClass().getSimpleName();
    }

    @Override
    public LastTimeStep clone() {
        return (LastTimeStep) super.clone();
    }

    /**
     * The wrappers' constructors take no name or dropout: a builder with neither, handed to the
     * {@code Layer(Builder)} constructor only to read its (empty) settings. It is never built, so
     * {@code build()} refuses instead of returning a half-made layer.
     */
    static final class NameOnly extends Layer.Builder<NameOnly> {
        @Override
        public Layer build() {
            throw new UnsupportedOperationException("NameOnly only carries a wrapper's empty name and dropout "
                    + "settings; build the wrapper itself (new LastTimeStep(layer), new MaskZeroLayer(layer, v), ...)");
        }
    }
}
