package org.ferrodl.jni;

/**
 * Raw JNI entry points of the DataSet binary format (implemented in Rust). Users should use
 * {@code DataSet.save}/{@code DataSet.load}.
 *
 * <p>Thread-safety: stateless; may be called from any thread.
 */
public final class NativeDataSetCodec {
    static {
        NativeLoader.load();
    }

    private NativeDataSetCodec() {
    }

    /**
     * Encodes a DataSet. Arrays are flat C-order data with their shapes; masks may be null.
     *
     * @param f features
     * @param fShape features shape
     * @param l labels
     * @param lShape labels shape
     * @param fm features mask or null
     * @param fmShape its shape or null
     * @param lm labels mask or null
     * @param lmShape its shape or null
     * @return the encoded bytes
     */
    public static native byte[] encode(float[] f, long[] fShape, float[] l, long[] lShape,
                                       float[] fm, long[] fmShape, float[] lm, long[] lmShape);

    /**
     * Decodes bytes written by {@link #encode}.
     *
     * @param bytes encoded DataSet
     * @return {@code {float[] f, long[] fShape, float[] l, long[] lShape, float[] fm|null,
     *     long[] fmShape|null, float[] lm|null, long[] lmShape|null}}
     * @throws org.ferrodl.exception.DataSetFormatException for malformed bytes
     */
    public static native Object[] decode(byte[] bytes);
}
