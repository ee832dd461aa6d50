package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;

/**
 * Adds zeros around {@code [C, H, W]} activations: {@code padding = [top, bottom, left, right]}
 * (default none). No parameters.
 *
 * <pre>{@code new ZeroPaddingLayer.Builder(1, 1).build()}</pre>
 */
public class ZeroPaddingLayer extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** Padding {@code [top, bottom, left, right]}. */
    protected int[] padding;

    /** For deserialization. */
    protected ZeroPaddingLayer() {
    }

    /** @param b the builder */
    protected ZeroPaddingLayer(Builder b) {
        super(b);
        this.padding = b.padding.clone();
    }

    /** @return a copy of the padding {@code [top, bottom, left, right]} */
    public int[] getPadding() {
        return padding == null ? null : padding.clone();
    }

    /** @param padding {@code [top, bottom, left, right]}, or {@code [height, width]} for both sides */
    public void setPadding(int... padding) {
        this.padding = four(padding);
    }

    static int[] four(int... p) {
        if (p == null || (p.length != 2 && p.length != 4)) {
            throw new DL4JInvalidConfigException("ZeroPaddingLayer padding needs 4 values (top, bottom, left, right) "
                    + "or 2 (height, width), got " + Arrays.toString(p));
        }
        return p.length == 2 ? new int[] {p[0], p[0], p[1], p[1]} : p.clone();
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        WindowSettings.atLeast(who, "padding", padding, 0, 4);
    }

    @Override
    public ZeroPaddingLayer clone() {
        ZeroPaddingLayer c = (ZeroPaddingLayer) super.clone();
        c.padding = padding == null ? null : padding.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && Arrays.equals(((ZeroPaddingLayer) o).padding, padding);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), Arrays.hashCode(padding));
    }

    /** Builder of {@link ZeroPaddingLayer}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** Padding {@code [top, bottom, left, right]}. */
        protected int[] padding = {0, 0, 0, 0};

        /** A builder without padding. */
        public Builder() {
        }

        /**
         * @param padHeight rows of zeros at the top and at the bottom
         * @param padWidth columns of zeros at the left and at the right
         */
        public Builder(int padHeight, int padWidth) {
            padding(padHeight, padWidth);
        }

        /**
         * @param padTop rows at the top
         * @param padBottom rows at the bottom
         * @param padLeft columns at the left
         * @param padRight columns at the right
         */
        public Builder(int padTop, int padBottom, int padLeft, int padRight) {
            padding(padTop, padBottom, padLeft, padRight);
        }

        /** @param padding {@code [top, bottom, left, right]} or {@code [height, width]} */
        public Builder(int[] padding) {
            padding(padding);
        }

        /**
         * @param padding {@code top, bottom, left, right}, or {@code height, width} for both sides
         * @return this builder
         */
        public Builder padding(int... padding) {
            this.padding = four(padding);
            return this;
        }

        @Override
        public ZeroPaddingLayer build() {
            return new ZeroPaddingLayer(this);
        }
    }
}
