package org.ferrodl.jni;

/**
 * Raw JNI entry points of the DataSet and MultiDataSet binary formats (implemented in Rust). Users
 * should use {@code DataSet.save}/{@code load} and {@code MultiDataSet.save}/{@code load}.
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

    /**
     * Encodes a MultiDataSet. Each list holds flat C-order arrays with their shapes (parallel
     * arrays); a mask list may be null (no masks) or have null entries (no mask for that array).
     *
     * @param f features arrays
     * @param fShapes their shapes
     * @param l labels arrays
     * @param lShapes their shapes
     * @param fm features masks or null
     * @param fmShapes their shapes or null
     * @param lm labels masks or null
     * @param lmShapes their shapes or null
     * @return the encoded bytes
     * @throws org.ferrodl.exception.DL4JInvalidInputException when shapes are inconsistent
     */
    public static native byte[] encodeMulti(float[][] f, long[][] fShapes, float[][] l, long[][] lShapes,
                                            float[][] fm, long[][] fmShapes, float[][] lm, long[][] lmShapes);

    /**
     * Decodes bytes written by {@link #encodeMulti}.
     *
     * @param bytes encoded MultiDataSet
     * @return {@code {float[][] f, long[][] fShapes, float[][] l, long[][] lShapes, float[][] fm|null,
     *     long[][] fmShapes|null, float[][] lm|null, long[][] lmShapes|null}}
     * @throws org.ferrodl.exception.DataSetFormatException for malformed bytes
     */
    public static native Object[] decodeMulti(byte[] bytes);
}
