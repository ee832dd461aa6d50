package org.ferrodl.bench.jvm;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.zip.GZIPInputStream;

/**
 * The MNIST digits of one split read from gzipped IDX files ({@code <split>-images-idx3-ubyte.gz},
 * {@code <split>-labels-idx1-ubyte.gz}), and their minibatches as plain float arrays so that each
 * benchmarked system wraps the very same numbers in its own DataSet type.
 *
 * <p>IDX: a big-endian header (magic 2051 for images with count, rows, cols; 2049 for labels with
 * count) followed by unsigned bytes.
 */
public final class Mnist {
    public static final int SIDE = 28;
    public static final int PIXELS = SIDE * SIDE;
    public static final int CLASSES = 10;

    public final int count;
    private final byte[] pixels;
    private final int[] labels;

    private Mnist(byte[] pixels, int[] labels) {
        this.count = labels.length;
        this.pixels = pixels;
        this.labels = labels;
    }

    public static Mnist load(Path dir, String split) throws IOException {
        byte[] px;
        int n;
        try (DataInputStream in = open(dir.resolve(split + "-images-idx3-ubyte.gz"))) {
            expect(in.readInt(), 2051, split + " images magic");
            n = in.readInt();
            expect(in.readInt(), SIDE, split + " image rows");
            expect(in.readInt(), SIDE, split + " image cols");
            px = new byte[n * PIXELS];
            in.readFully(px);
        }
        int[] lab = new int[n];
        try (DataInputStream in = open(dir.resolve(split + "-labels-idx1-ubyte.gz"))) {
            expect(in.readInt(), 2049, split + " labels magic");
            expect(in.readInt(), n, split + " label count");
            for (int i = 0; i < n; i++) {
                lab[i] = in.readUnsignedByte();
                if (lab[i] >= CLASSES) {
                    throw new IOException(split + ": label " + lab[i] + " at " + i);
                }
            }
        }
        return new Mnist(px, lab);
    }

    private static DataInputStream open(Path p) throws IOException {
        InputStream raw = new BufferedInputStream(Files.newInputStream(p), 1 << 16);
        return new DataInputStream(new GZIPInputStream(raw, 1 << 16));
    }

    private static void expect(int got, int want, String what) throws IOException {
        if (got != want) {
            throw new IOException(what + ": " + got + ", expected " + want);
        }
    }

    public int label(int i) {
        return labels[i];
    }

    /** Minibatches as float arrays: features {@code rows x 784} in [0,1], one-hot labels {@code rows x 10}. */
    public static final class Batches {
        public final int batchSize;
        public final float[][] features;
        public final float[][] labels;
        /** the label index of every example, batch after batch */
        public final int[] classes;

        Batches(int batchSize, float[][] features, float[][] labels, int[] classes) {
            this.batchSize = batchSize;
            this.features = features;
            this.labels = labels;
            this.classes = classes;
        }

        public int size() {
            return features.length;
        }

        public int rows(int i) {
            return labels[i].length / CLASSES;
        }
    }

    /**
     * The split in one fixed order (a Fisher-Yates shuffle with {@code seed} from java.util.Random,
     * or the file order when {@code seed} is negative) cut into minibatches of {@code batch};
     * with {@code fullOnly} the final partial minibatch is dropped.
     */
    public Batches batches(int batch, long seed, boolean fullOnly) {
        int[] order = new int[count];
        for (int i = 0; i < count; i++) {
            order[i] = i;
        }
        if (seed >= 0) {
            Random rng = new Random(seed);
            for (int i = count - 1; i > 0; i--) {
                int j = rng.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        int nb = fullOnly ? count / batch : (count + batch - 1) / batch;
        float[][] f = new float[nb][];
        float[][] l = new float[nb][];
        int[] cls = new int[Math.min(count, nb * batch)];
        for (int b = 0; b < nb; b++) {
            int start = b * batch;
            int rows = Math.min(batch, count - start);
            f[b] = new float[rows * PIXELS];
            l[b] = new float[rows * CLASSES];
            for (int r = 0; r < rows; r++) {
                int ex = order[start + r];
                for (int p = 0; p < PIXELS; p++) {
                    f[b][r * PIXELS + p] = (pixels[ex * PIXELS + p] & 0xff) / 255.0f;
                }
                l[b][r * CLASSES + labels[ex]] = 1.0f;
                cls[start + r] = labels[ex];
            }
        }
        return new Batches(batch, f, l, cls);
    }
}
