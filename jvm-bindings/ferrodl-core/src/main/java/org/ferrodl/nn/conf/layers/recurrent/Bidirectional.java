package org.ferrodl.nn.conf.layers.recurrent;

import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LayerWrappers;

/**
 * Runs a recurrent layer over the sequence forwards and a copy of it (own parameters, same settings)
 * backwards, and combines the two outputs per time step (the reference's {@code Bidirectional}):
 * {@link Mode#CONCAT} (default; {@code 2·nOut} outputs), {@link Mode#ADD}, {@link Mode#MUL},
 * {@link Mode#AVERAGE}. Parameters: the forward layer's with prefix {@code f}, then the backward
 * layer's with prefix {@code b} ({@code fW, fRW, fb, bW, bRW, bb} for an LSTM).
 *
 * <p>JSON: {@code {"type":"Bidirectional","name":..,"dropOut":..,"mode":"CONCAT","fwd":{...}}}; the
 * backward layer is the engine's copy of {@code fwd}. The wrapper's own {@code dropOut} defaults to
 * 0 (the wrapped layer applies the input dropout) and its name to the wrapped layer's.
 *
 * <pre>{@code new Bidirectional(Bidirectional.Mode.ADD, new LSTM.Builder().nIn(10).nOut(32).build())}</pre>
 */
public class Bidirectional extends Layer {
    private static final long serialVersionUID = 1L;

    /** How the forward and backward outputs are combined at each time step. */
    public enum Mode {
        /** Element-wise sum. */
        ADD,
        /** Element-wise product. */
        MUL,
        /** Element-wise mean. */
        AVERAGE,
        /** Concatenated along the size axis: {@code 2·nOut} outputs (default). */
        CONCAT
    }

    /** How the outputs are combined. */
    protected Mode mode = Mode.CONCAT;
    /** The forward layer (the backward layer is a copy with its own parameters). */
    protected Layer fwd;

    /** For deserialization. */
    protected Bidirectional() {
    }

    /**
     * Mode CONCAT.
     *
     * @param layer the recurrent layer (copied)
     * @throws DL4JInvalidConfigException when it is not a recurrent layer
     */
    public Bidirectional(Layer layer) {
        this(Mode.CONCAT, layer);
    }

    /**
     * @param mode how the forward and backward outputs are combined
     * @param layer the recurrent layer (copied)
     * @throws DL4JInvalidConfigException when it is not a recurrent layer
     */
    public Bidirectional(Mode mode, Layer layer) {
        this(new Builder().mode(mode).rnnLayer(layer));
    }

    /** @param b the builder */
    protected Bidirectional(Builder b) {
        super(b);
        if (b.mode == null) {
            throw new DL4JInvalidConfigException("Bidirectional: mode must not be null");
        }
        if (b.layer == null) {
            throw new DL4JInvalidConfigException("Bidirectional: the recurrent layer is not set (use .rnnLayer(..))");
        }
        String problem = wrapProblem(b.layer);
        if (problem != null) {
            throw new DL4JInvalidConfigException("Bidirectional: " + problem);
        }
        this.mode = b.mode;
        this.fwd = b.layer.clone();
        if (this.name == null) {
            this.name = fwd.getLayerName();
        }
        if (this.dropOut == null) {
            this.dropOut = 0.0;
        }
    }

    private static String wrapProblem(Layer l) {
        if (l instanceof Bidirectional || !LayerWrappers.isRecurrent(l)) {
            return "cannot wrap a non-recurrent layer: the layer must be an LSTM, GravesLSTM or SimpleRnn (or a "
                    + "LastTimeStep or MaskZeroLayer around one), got " + l.getClass().getSimpleName();
        }
        return null;
    }

    /** @return how the outputs are combined (default CONCAT) */
    public Mode getMode() {
        return mode;
    }

    /** @param mode how the outputs are combined */
    public void setMode(Mode mode) {
        this.mode = mode;
    }

    /** @return the forward layer's configuration (live) */
    public Layer getFwd() {
        return fwd;
    }

    /** @return the backward layer's configuration: a copy of the forward one (same settings, own parameters) */
    public Layer getBwd() {
        return fwd == null ? null : fwd.clone();
    }

    /** @param fwd the forward layer's configuration */
    public void setFwd(Layer fwd) {
        this.fwd = fwd;
    }

    /** @return the wrapped layer's {@code nIn}, or null when unset */
    public Long getNIn() {
        Layer in = LayerWrappers.innermost(fwd);
        return in instanceof FeedForwardLayer ? ((FeedForwardLayer) in).getNIn() : null;
    }

    /**
     * The wrapped layer's {@code nOut}, as the reference reports it (its {@code summary()} column too):
     * in CONCAT mode each time step has twice as many outputs, which the output type says
     * ({@code getLayerActivationTypes()}: {@code recurrent(2·nOut)}).
     *
     * @return the wrapped layer's {@code nOut}, or null when unset
     */
    public Long getNOut() {
        Layer in = LayerWrappers.innermost(fwd);
        return in instanceof FeedForwardLayer ? ((FeedForwardLayer) in).getNOut() : null;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (mode == null) {
            throw missing(who, "mode");
        }
        if (fwd == null) {
            throw missing(who, "fwd");
        }
        String problem = wrapProblem(fwd);
        if (problem != null) {
            throw invalid(who, problem);
        }
    }

    @Override
    public Bidirectional clone() {
        Bidirectional c = (Bidirectional) super.clone();
        c.fwd = fwd == null ? null : fwd.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        Bidirectional b = (Bidirectional) o;
        return mode == b.mode && Objects.equals(fwd, b.fwd);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), mode, fwd);
    }

    /** Builder of {@link Bidirectional}. */
    public static class Builder extends Layer.Builder<Builder> {
        private Mode mode = Mode.CONCAT;
        private Layer layer;

        /** A builder in CONCAT mode; set the layer with {@link #rnnLayer(Layer)}. */
        public Builder() {
        }

        /**
         * @param mode how the forward and backward outputs are combined (default CONCAT)
         * @return this builder
         */
        public Builder mode(Mode mode) {
            this.mode = mode;
            return this;
        }

        /**
         * @param layer the recurrent layer to run in both directions
         * @return this builder
         */
        public Builder rnnLayer(Layer layer) {
            this.layer = layer;
            return this;
        }

        @Override
        public Bidirectional build() {
            return new Bidirectional(this);
        }
    }
}
