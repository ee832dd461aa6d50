package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import org.ferrodl.linalg.activations.Activation;

/**
 * The settings both LSTM variants share: the gates' activation ({@code gateActivationFn}, default
 * SIGMOID; it should map into [0, 1]) and the initial bias of the forget gate
 * ({@code forgetGateBiasInit}, default 1.0, which helps learning long dependencies). The cell and
 * output activation is the layer's {@code activation} (the global value unless set, as in the
 * reference; TANH is the usual choice). Parameters: {@code W [nIn, 4·nOut]}, {@code RW [nOut, 4·nOut]}
 * (GravesLSTM: {@code 4·nOut+3} columns, the last three the peepholes), {@code b [4·nOut]}.
 */
public abstract class AbstractLSTM extends BaseRecurrentLayer {
    private static final long serialVersionUID = 1L;

    /** Initial bias of the forget gate. */
    protected double forgetGateBiasInit = 1.0;
    /** Activation of the input, forget and output gates. */
    protected Activation gateActivationFn = Activation.SIGMOID;

    /** For deserialization and subclasses. */
    protected AbstractLSTM() {
    }

    /** @param b the builder */
    protected AbstractLSTM(Builder<?> b) {
        super(b);
        this.forgetGateBiasInit = b.forgetGateBiasInit;
        this.gateActivationFn = b.gateActivationFn;
    }

    /** @return the forget gate's initial bias (default 1.0) */
    public double getForgetGateBiasInit() {
        return forgetGateBiasInit;
    }

    /** @param forgetGateBiasInit the forget gate's initial bias */
    public void setForgetGateBiasInit(double forgetGateBiasInit) {
        this.forgetGateBiasInit = forgetGateBiasInit;
    }

    /** @return the gates' activation (default SIGMOID) */
    public Activation getGateActivationFn() {
        return gateActivationFn;
    }

    /** @param gateActivationFn the gates' activation */
    public void setGateActivationFn(Activation gateActivationFn) {
        this.gateActivationFn = gateActivationFn;
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        if (gateActivationFn == null) {
            throw missing(who, "gateActivationFn");
        }
        if (!Double.isFinite(forgetGateBiasInit)) {
            throw invalid(who, "forgetGateBiasInit=" + forgetGateBiasInit + " is invalid (must be finite)");
        }
    }

    @Override
    public AbstractLSTM clone() {
        return (AbstractLSTM) super.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!super.equals(o)) {
            return false;
        }
        AbstractLSTM l = (AbstractLSTM) o;
        return Double.compare(forgetGateBiasInit, l.forgetGateBiasInit) == 0 && gateActivationFn == l.gateActivationFn;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), forgetGateBiasInit, gateActivationFn);
    }

    /**
     * Builder of LSTM layers.
     *
     * @param <T> the concrete builder type
     */
    public abstract static class Builder<T extends Builder<T>> extends BaseRecurrentLayer.Builder<T> {
        /** Forget gate bias. */
        protected double forgetGateBiasInit = 1.0;
        /** Gate activation. */
        protected Activation gateActivationFn = Activation.SIGMOID;

        /**
         * @param biasInit initial bias of the forget gate (default 1.0; values of 1 to 5 can help learning
         *     longer dependencies)
         * @return this builder
         */
        public T forgetGateBiasInit(double biasInit) {
            this.forgetGateBiasInit = biasInit;
            return self();
        }

        /**
         * @param gateActivationFn activation of the gates (default SIGMOID); should map into [0, 1], e.g.
         *     SIGMOID or HARDSIGMOID
         * @return this builder
         */
        public T gateActivationFunction(Activation gateActivationFn) {
            this.gateActivationFn = Objects.requireNonNull(gateActivationFn, "gateActivationFn");
            return self();
        }

        /**
         * @param gateActivationFn the gates' activation by name, e.g. {@code "sigmoid"} (case-insensitive)
         * @return this builder
         * @throws IllegalArgumentException for an unknown name
         */
        public T gateActivationFunction(String gateActivationFn) {
            Objects.requireNonNull(gateActivationFn, "gateActivationFn");
            try {
                return gateActivationFunction(Activation.valueOf(gateActivationFn.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown gate activation \"" + gateActivationFn + "\"; one of "
                        + Arrays.toString(Activation.values()), e);
            }
        }
    }
}
