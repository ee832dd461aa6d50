package org.ferrodl.nn.conf.layers;

/**
 * LSTM recurrent layer with peephole connections, after Graves, "Supervised Sequence Labelling with
 * Recurrent Neural Networks" (the reference's {@code GravesLSTM}, deprecated there in favour of
 * {@link LSTM} only for lack of cuDNN support). Parameters {@code W [nIn, 4·nOut]},
 * {@code RW [nOut, 4·nOut+3]} (the last three columns: the peephole weights of the input, forget and
 * output gates), {@code b [4·nOut]}.
 *
 * <pre>{@code new GravesLSTM.Builder().nIn(77).nOut(200).activation(Activation.TANH).build()}</pre>
 */
public class GravesLSTM extends AbstractLSTM {
    private static final long serialVersionUID = 1L;

    /** For deserialization. */
    protected GravesLSTM() {
    }

    /** @param b the builder */
    protected GravesLSTM(Builder b) {
        super(b);
    }

    @Override
    public GravesLSTM clone() {
        return (GravesLSTM) super.clone();
    }

    /** Builder of {@link GravesLSTM}. */
    public static class Builder extends AbstractLSTM.Builder<Builder> {
        /** A builder with the defaults (forget gate bias 1.0, SIGMOID gates, NCW). */
        public Builder() {
        }

        @Override
        public GravesLSTM build() {
            return new GravesLSTM(this);
        }
    }
}
