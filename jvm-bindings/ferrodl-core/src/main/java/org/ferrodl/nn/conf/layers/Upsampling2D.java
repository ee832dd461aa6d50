package org.ferrodl.nn.conf.layers;

import java.util.Arrays;
import java.util.Objects;

/**
 * Nearest-neighbour upsampling of {@code [C, H, W]} activations: each pixel repeated
 * {@code size[0] × size[1]} times (default 1×1). No parameters.
 *
 * <pre>{@code new Upsampling2D.Builder(2).build()}</pre>
 */
public class Upsampling2D extends NoParamLayer {
    private static final long serialVersionUID = 1L;

    /** Repetitions {@code [height, width]}. */
    protected int[] size;

    /** For deserialization. */
    protected Upsampling2D() {
    }

    /** @param b the builder */
    protected Upsampling2D(Builder b) {
        super(b);
        this.size = b.size.clone();
    }

    /** @return a copy of the repetitions {@code [height, width]} */
    public int[] getSize() {
        return size == null ? null : size.clone();
    }

    /** @param size repetitions {@code [height, width]} (one value: both) */
    public void setSize(int... size) {
        this.size = pair("Upsampling2D", "size", size);
    }

    @Override
    protected void checkSettings(String who) {
        super.checkSettings(who);
        WindowSettings.atLeast(who, "size", size, 1, 2);
    }

    @Override
    public Upsampling2D clone() {
        Upsampling2D c = (Upsampling2D) super.clone();
        c.size = size == null ? null : size.clone();
        return c;
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && Arrays.equals(((Upsampling2D) o).size, size);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), Arrays.hashCode(size));
    }

    /** Builder of {@link Upsampling2D}. */
    public static class Builder extends Layer.Builder<Builder> {
        /** Repetitions. */
        protected int[] size = {1, 1};

        /** A builder with size 1×1. */
        public Builder() {
        }

        /** @param size repetitions along height and width */
        public Builder(int size) {
            size(size);
        }

        /**
         * @param size repetitions along height and width
         * @return this builder
         */
        public Builder size(int size) {
            this.size = new int[] {size, size};
            return this;
        }

        /**
         * @param size repetitions {@code [height, width]}
         * @return this builder
         */
        public Builder size(int[] size) {
            this.size = pair("Upsampling2D", "size", size);
            return this;
        }

        @Override
        public Upsampling2D build() {
            return new Upsampling2D(this);
        }
    }
}
