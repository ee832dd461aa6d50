package org.ferrodl.examples;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads the IDX files MNIST is distributed in (http://yann.lecun.com/exdb/mnist/ describes the
 * format): a big-endian header — magic number, then one 32-bit size per dimension — followed by the
 * unsigned bytes. Images have magic 2051 (3 dimensions: count, rows, columns), labels 2049 (1
 * dimension: count). Every problem is reported as an {@link IdxFormatException} whose message names
 * the file and what is wrong with it.
 */
public final class IdxReader {
    public static final int IMAGES_MAGIC = 2051;
    public static final int LABELS_MAGIC = 2049;

    /** Images of one IDX file: {@code count} images of {@code rows x cols} unsigned bytes each. */
    public static final class Images {
        public final int count;
        public final int rows;
        public final int cols;
        /** count * rows * cols grey levels 0..255, image after image, row-major. */
        public final byte[] pixels;

        Images(int count, int rows, int cols, byte[] pixels) {
            this.count = count;
            this.rows = rows;
            this.cols = cols;
            this.pixels = pixels;
        }

        public int pixelsPerImage() {
            return rows * cols;
        }
    }

    private IdxReader() {
    }

    /** Opens a gzip stream, turning "not in GZIP format" into a message naming the file. */
    public static InputStream gunzip(InputStream raw, String name) throws IdxFormatException {
        try {
            return new GZIPInputStream(new BufferedInputStream(raw), 1 << 16);
        } catch (ZipException | EOFException e) {
            throw new IdxFormatException(name + ": not a gzip file (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            throw new IdxFormatException(name + ": cannot read: " + e.getMessage(), e);
        }
    }

    /** Reads an uncompressed IDX image stream (use {@link #gunzip} first for .gz files). */
    public static Images readImages(InputStream in, String name) throws IdxFormatException {
        DataInputStream data = new DataInputStream(in);
        int magic = readHeaderInt(data, name, "magic number");
        if (magic != IMAGES_MAGIC) {
            throw new IdxFormatException(name + ": not an IDX image file: magic number " + magic
                    + (magic == LABELS_MAGIC ? " (a label file)" : "") + ", expected " + IMAGES_MAGIC);
        }
        int count = readHeaderInt(data, name, "image count");
        int rows = readHeaderInt(data, name, "row count");
        int cols = readHeaderInt(data, name, "column count");
        if (count <= 0 || rows <= 0 || cols <= 0) {
            throw new IdxFormatException(name + ": bad IDX image header: count=" + count + " rows=" + rows
                    + " cols=" + cols + " (all must be positive)");
        }
        long total = (long) count * rows * cols;
        if (total > Integer.MAX_VALUE - 16) {
            throw new IdxFormatException(name + ": IDX image header announces " + total
                    + " bytes of pixels, too many for this reader");
        }
        byte[] pixels = new byte[(int) total];
        readBody(data, pixels, name, count + " images of " + rows + "x" + cols);
        return new Images(count, rows, cols, pixels);
    }

    /** Reads an uncompressed IDX label stream; every label must lie in [0, numClasses). */
    public static int[] readLabels(InputStream in, String name, int numClasses) throws IdxFormatException {
        DataInputStream data = new DataInputStream(in);
        int magic = readHeaderInt(data, name, "magic number");
        if (magic != LABELS_MAGIC) {
            throw new IdxFormatException(name + ": not an IDX label file: magic number " + magic
                    + (magic == IMAGES_MAGIC ? " (an image file)" : "") + ", expected " + LABELS_MAGIC);
        }
        int count = readHeaderInt(data, name, "label count");
        if (count <= 0) {
            throw new IdxFormatException(name + ": bad IDX label header: count=" + count + " (must be positive)");
        }
        byte[] raw = new byte[count];
        readBody(data, raw, name, count + " labels");
        int[] labels = new int[count];
        for (int i = 0; i < count; i++) {
            int label = raw[i] & 0xff;
            if (label >= numClasses) {
                throw new IdxFormatException(name + ": label " + label + " at index " + i
                        + " is outside [0, " + numClasses + ")");
            }
            labels[i] = label;
        }
        return labels;
    }

    private static int readHeaderInt(DataInputStream data, String name, String what) throws IdxFormatException {
        try {
            return data.readInt();
        } catch (EOFException e) {
            throw new IdxFormatException(name + ": truncated IDX header (file ends before the " + what + ")", e);
        } catch (IOException e) {
            throw wrap(name, e);
        }
    }

    private static void readBody(DataInputStream data, byte[] into, String name, String what)
            throws IdxFormatException {
        int off = 0;
        try {
            while (off < into.length) {
                int n = data.read(into, off, into.length - off);
                if (n < 0) {
                    throw new IdxFormatException(name + ": truncated: header announces " + what + " ("
                            + into.length + " bytes) but the file holds only " + off);
                }
                off += n;
            }
            long extra = 0;
            byte[] skip = new byte[8192];
            for (int n; (n = data.read(skip)) > 0; ) {
                extra += n;
            }
            if (extra > 0) {
                throw new IdxFormatException(name + ": " + extra + " unexpected bytes after the " + what
                        + " the header announces");
            }
        } catch (IdxFormatException e) {
            throw e;
        } catch (IOException e) {
            throw wrap(name, e);
        }
    }

    private static IdxFormatException wrap(String name, IOException e) {
        // a corrupt gzip stream surfaces here (ZipException, or EOF inside the deflate stream)
        return new IdxFormatException(name + ": cannot read: " + e.getClass().getSimpleName() + ": "
                + e.getMessage(), e);
    }
}
