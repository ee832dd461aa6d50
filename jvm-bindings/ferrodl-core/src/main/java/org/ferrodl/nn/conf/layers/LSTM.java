package org.ferrodl.nn.conf.layers;

/**
 * LSTM recurrent layer without peephole connections (the reference's {@code LSTM}): per time step
 * the input, forget and output gates and the cell input from {@code x·W + h·RW + b}, cell
 * {@code c = f⊙c' + i⊙act(z)}, output {@code h = o⊙act(c)}. Parameters {@code W [nIn, 4·nOut]},
 * {@code RW [nOut, 4·nOut]}, {@code b [4·nOut]}.
 *
 * <pre>{@code new LSTM.Builder().nIn(10).nOut(64).activation(Activation.TANH).build()}</pre>
 */
public class LSTM extends AbstractLSTM {
    private static final long serialVersionUID = 1L;

    /** For deserialization. */
    protected LSTM() {
    }

    /** @param b the builder */
    protected LSTM(Builder b) {
        super(b);
    }

    @Override
    public LSTM clone() {
        return (LSTM) super.clone();
    }

    /** Builder of {@link LSTM}. */
    public static class Builder extends AbstractLSTM.Builder<Builder> {
        /** A builder with the defaults (forget gate bias 1.0, SIGMOID gates, NCW). */
        public Builder() {
        }

        @Override
        public LSTM build() {
            return new LSTM(this);
        }
    }
}
