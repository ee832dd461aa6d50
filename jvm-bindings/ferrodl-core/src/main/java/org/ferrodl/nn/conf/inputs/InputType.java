package org.ferrodl.nn.conf.inputs;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import java.util.Objects;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.nn.conf.RNNFormat;

/**
 * What a network's input (or a layer's activations) looks like, per example. Set with
 * {@code ListBuilder.setInputType(..)}; {@code build()} then infers every layer's {@code nIn}.
 *
 * <p>Every example is one row: convolutional activations hold {@code C·H·W} values in NCHW order,
 * recurrent ones {@code C·L} ({@code [C, L]}). JSON (docs/ARCHITECTURE.md §2.1):
 * {@code {"type":"feedForward","size"}}, {@code {"type":"convolutional","height","width","channels"}},
 * {@code {"type":"convolutionalFlat","height","width","depth"}},
 * {@code {"type":"recurrent","size","timeSeriesLength"[,"format":"NWC"]}} (length 0: unknown).
 *
 * <p>Immutable.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = InputType.InputTypeFeedForward.class, name = "feedForward"),
    @JsonSubTypes.Type(value = InputType.InputTypeConvolutional.class, name = "convolutional"),
    @JsonSubTypes.Type(value = InputType.InputTypeConvolutionalFlat.class, name = "convolutionalFlat"),
    @JsonSubTypes.Type(value = InputType.InputTypeRecurrent.class, name = "recurrent")
})
public abstract class InputType implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The kinds of input (the reference's names). */
    public enum Type {
        /** Feed-forward: a vector per example. */
        FF,
        /** Recurrent: {@code [size, timeSeriesLength]} per example. */
        RNN,
        /** Convolutional: {@code [channels, height, width]} per example. */
        CNN,
        /** An image given as a flat row of {@code depth·height·width} values. */
        CNNFlat
    }

    /** For subclasses and deserialization. */
    protected InputType() {
    }

    /** @return the kind of input */
    public abstract Type getType();

    /** @return the number of values per example (-1 when a recurrent length is unknown) */
    public abstract long arrayElementsPerExample();

    /**
     * @param size number of features
     * @return a feed-forward input type
     */
    public static InputType feedForward(long size) {
        return new InputTypeFeedForward(size);
    }

    /**
     * A recurrent input whose length is not fixed: each minibatch may have its own number of time
     * steps ({@code timeSeriesLength} -1 in Java, 0 in JSON).
     *
     * @param size number of channels (features per time step)
     * @return a recurrent input type of unknown length, NCW
     */
    public static InputType recurrent(long size) {
        return new InputTypeRecurrent(size, -1);
    }

    /**
     * @param size number of channels (features per time step)
     * @param format layout of the arrays: NCW {@code [minibatch, size, timeSteps]} or NWC
     * @return a recurrent input type of unknown length
     */
    public static InputType recurrent(long size, RNNFormat format) {
        return new InputTypeRecurrent(size, -1, format);
    }

    /**
     * @param size number of channels (features per time step)
     * @param timeSeriesLength number of time steps, or -1 when unknown
     * @return a recurrent input type, NCW
     */
    public static InputType recurrent(long size, long timeSeriesLength) {
        return new InputTypeRecurrent(size, timeSeriesLength);
    }

    /**
     * @param size number of channels (features per time step)
     * @param timeSeriesLength number of time steps, or -1 when unknown
     * @param format layout of the arrays: NCW {@code [minibatch, size, timeSteps]} or NWC
     * @return a recurrent input type
     */
    public static InputType recurrent(long size, long timeSeriesLength, RNNFormat format) {
        return new InputTypeRecurrent(size, timeSeriesLength, format);
    }

    /**
     * @param height image height
     * @param width image width
     * @param channels number of channels
     * @return a convolutional input type (examples as {@code [channels, height, width]})
     */
    public static InputType convolutional(long height, long width, long channels) {
        return new InputTypeConvolutional(height, width, channels);
    }

    /**
     * @param height image height
     * @param width image width
     * @param depth number of channels
     * @return a convolutional input type whose examples arrive as flat rows of
     *     {@code depth·height·width} values (e.g. MNIST's 784 columns)
     */
    public static InputType convolutionalFlat(long height, long width, long depth) {
        return new InputTypeConvolutionalFlat(height, width, depth);
    }

    static long positive(String what, long v) {
        if (v <= 0) {
            throw new DL4JInvalidConfigException("InputType " + what + " must be positive, got " + v);
        }
        return v;
    }

    /** Feed-forward input: {@code size} features per example. */
    @JsonPropertyOrder({"size"})
    public static class InputTypeFeedForward extends InputType {
        private static final long serialVersionUID = 1L;
        private long size;

        /** For deserialization. */
        protected InputTypeFeedForward() {
        }

        /** @param size number of features */
        public InputTypeFeedForward(long size) {
            this.size = positive("size", size);
        }

        /** @return number of features */
        public long getSize() {
            return size;
        }

        @Override
        public Type getType() {
            return Type.FF;
        }

        @Override
        public long arrayElementsPerExample() {
            return size;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof InputTypeFeedForward && ((InputTypeFeedForward) o).size == size;
        }

        @Override
        public int hashCode() {
            return Objects.hash("FF", size);
        }

        @Override
        public String toString() {
            return "feed-forward [" + size + "]";
        }
    }

    /**
     * Recurrent input: {@code [size, timeSeriesLength]} per example (NCW; {@code [timeSeriesLength,
     * size]} with NWC). An unknown length is -1 here and 0 in JSON; the NCW format is not written
     * (JSON {@code format} is optional, default NCW).
     */
    @JsonPropertyOrder({"size", "timeSeriesLength", "format"})
    public static class InputTypeRecurrent extends InputType {
        private static final long serialVersionUID = 1L;
        private long size;
        @JsonIgnore
        private long timeSeriesLength;
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = DefaultFormat.class)
        private RNNFormat format = RNNFormat.NCW;

        /** For deserialization. */
        protected InputTypeRecurrent() {
        }

        /**
         * @param size number of channels
         * @param timeSeriesLength number of time steps, or -1 when unknown
         */
        public InputTypeRecurrent(long size, long timeSeriesLength) {
            this(size, timeSeriesLength, RNNFormat.NCW);
        }

        /**
         * @param size number of channels
         * @param timeSeriesLength number of time steps, or -1 when unknown
         * @param format layout of the arrays
         */
        public InputTypeRecurrent(long size, long timeSeriesLength, RNNFormat format) {
            this.size = positive("size", size);
            if (timeSeriesLength != -1) {
                positive("timeSeriesLength", timeSeriesLength);
            }
            this.timeSeriesLength = timeSeriesLength;
            this.format = Objects.requireNonNull(format, "format");
        }

        /** JSON: 0 for an unknown length. */
        @JsonProperty("timeSeriesLength")
        private long jsonTimeSeriesLength() {
            return Math.max(timeSeriesLength, 0);
        }

        @JsonProperty("timeSeriesLength")
        private void jsonTimeSeriesLength(long length) {
            if (length < 0) {
                throw new IllegalArgumentException("timeSeriesLength must be >= 0 (0: unknown), got " + length);
            }
            this.timeSeriesLength = length == 0 ? -1 : length;
        }

        /** @return number of channels (features per time step) */
        public long getSize() {
            return size;
        }

        /** @return number of time steps, or -1 when unknown */
        public long getTimeSeriesLength() {
            return timeSeriesLength;
        }

        /** @return the layout of the arrays (default NCW) */
        public RNNFormat getFormat() {
            return format;
        }

        @Override
        public Type getType() {
            return Type.RNN;
        }

        @Override
        public long arrayElementsPerExample() {
            return timeSeriesLength < 0 ? -1 : size * timeSeriesLength;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof InputTypeRecurrent && ((InputTypeRecurrent) o).size == size
                    && ((InputTypeRecurrent) o).timeSeriesLength == timeSeriesLength
                    && ((InputTypeRecurrent) o).format == format;
        }

        @Override
        public int hashCode() {
            return Objects.hash("RNN", size, timeSeriesLength, format);
        }

        @Override
        public String toString() {
            return "recurrent [C=" + size + ", L=" + (timeSeriesLength < 0 ? "?" : timeSeriesLength) + "]"
                    + (format == RNNFormat.NWC ? " NWC" : "");
        }

        private Object readResolve() {
            if (format == null) {
                format = RNNFormat.NCW;
            }
            return this;
        }
    }

    /** Leaves the default recurrent format out of the JSON ({@code format} is optional there). */
    static final class DefaultFormat {
        @Override
        public boolean equals(Object o) {
            return o == null || o == RNNFormat.NCW;
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }

    /** Convolutional input: {@code [channels, height, width]} per example (NCHW). */
    @JsonPropertyOrder({"height", "width", "channels"})
    public static class InputTypeConvolutional extends InputType {
        private static final long serialVersionUID = 1L;
        private long height;
        private long width;
        private long channels;

        /** For deserialization. */
        protected InputTypeConvolutional() {
        }

        /**
         * @param height image height
         * @param width image width
         * @param channels number of channels
         */
        public InputTypeConvolutional(long height, long width, long channels) {
            this.height = positive("height", height);
            this.width = positive("width", width);
            this.channels = positive("channels", channels);
        }

        /** @return image height */
        public long getHeight() {
            return height;
        }

        /** @return image width */
        public long getWidth() {
            return width;
        }

        /** @return number of channels */
        public long getChannels() {
            return channels;
        }

        /**
         * @return number of channels
         * @deprecated use {@link #getChannels()}
         */
        @Deprecated
        public long getDepth() {
            return channels;
        }

        @Override
        public Type getType() {
            return Type.CNN;
        }

        @Override
        public long arrayElementsPerExample() {
            return height * width * channels;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof InputTypeConvolutional)) {
                return false;
            }
            InputTypeConvolutional c = (InputTypeConvolutional) o;
            return c.height == height && c.width == width && c.channels == channels;
        }

        @Override
        public int hashCode() {
            return Objects.hash("CNN", height, width, channels);
        }

        @Override
        public String toString() {
            return "convolutional [C=" + channels + ", H=" + height + ", W=" + width + "]";
        }
    }

    /** An image given as a flat row of {@code depth·height·width} values (read as {@code [depth, height, width]}). */
    @JsonPropertyOrder({"height", "width", "depth"})
    public static class InputTypeConvolutionalFlat extends InputType {
        private static final long serialVersionUID = 1L;
        private long height;
        private long width;
        private long depth;

        /** For deserialization. */
        protected InputTypeConvolutionalFlat() {
        }

        /**
         * @param height image height
         * @param width image width
         * @param depth number of channels
         */
        public InputTypeConvolutionalFlat(long height, long width, long depth) {
            this.height = positive("height", height);
            this.width = positive("width", width);
            this.depth = positive("depth", depth);
        }

        /** @return image height */
        public long getHeight() {
            return height;
        }

        /** @return image width */
        public long getWidth() {
            return width;
        }

        /** @return number of channels */
        public long getDepth() {
            return depth;
        }

        /** @return {@code height·width·depth} */
        public long getFlattenedSize() {
            return height * width * depth;
        }

        /** @return the same image as a convolutional input type */
        public InputTypeConvolutional getUnflattenedType() {
            return new InputTypeConvolutional(height, width, depth);
        }

        @Override
        public Type getType() {
            return Type.CNNFlat;
        }

        @Override
        public long arrayElementsPerExample() {
            return getFlattenedSize();
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof InputTypeConvolutionalFlat)) {
                return false;
            }
            InputTypeConvolutionalFlat c = (InputTypeConvolutionalFlat) o;
            return c.height == height && c.width == width && c.depth == depth;
        }

        @Override
        public int hashCode() {
            return Objects.hash("CNNFlat", height, width, depth);
        }

        @Override
        public String toString() {
            return "convolutional-flat [C=" + depth + ", H=" + height + ", W=" + width + "]";
        }
    }
}
