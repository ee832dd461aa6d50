package org.ferrodl.examples;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * One MNIST split (images + labels) held on the driver as compact bytes, and its conversion into
 * minibatch {@link DataSet}s: features scaled to [0, 1] ({@code N x 784}), one-hot labels
 * ({@code N x 10}).
 */
public final class MnistData {
    public static final int NUM_CLASSES = 10;
    public static final int IMAGE_SIDE = 28;
    public static final int PIXELS = IMAGE_SIDE * IMAGE_SIDE;
    /** classpath folder of the copy of the data inside the jar */
    public static final String RESOURCE_DIR = "mnist10k";

    public final String name;
    public final int count;
    /** count * 784 grey levels 0..255 */
    private final byte[] pixels;
    private final int[] labels;

    MnistData(String name, byte[] pixels, int[] labels) {
        this.name = name;
        this.count = labels.length;
        this.pixels = pixels;
        this.labels = labels;
    }

    /**
     * Loads split {@code split} ("train" or "test"): {@code <split>-images-idx3-ubyte.gz} and
     * {@code <split>-labels-idx1-ubyte.gz} from {@code dataDir}, or from the copy inside the jar when
     * {@code dataDir} is null. In a directory an uncompressed file (same name without .gz) is accepted
     * too.
     */
    public static MnistData load(Path dataDir, String split) throws IOException {
        String imagesFile = split + "-images-idx3-ubyte";
        String labelsFile = split + "-labels-idx1-ubyte";
        IdxReader.Images images;
        int[] labels;
        try (InputStream in = open(dataDir, imagesFile)) {
            images = IdxReader.readImages(in, where(dataDir, imagesFile));
        }
        try (InputStream in = open(dataDir, labelsFile)) {
            labels = IdxReader.readLabels(in, where(dataDir, labelsFile), NUM_CLASSES);
        }
        if (images.rows != IMAGE_SIDE || images.cols != IMAGE_SIDE) {
            throw new IdxFormatException(where(dataDir, imagesFile) + ": images are " + images.rows + "x"
                    + images.cols + ", the example's network expects " + IMAGE_SIDE + "x" + IMAGE_SIDE);
        }
        if (images.count != labels.length) {
            throw new IdxFormatException(split + " split: " + images.count + " images but " + labels.length
                    + " labels (" + where(dataDir, imagesFile) + " vs " + where(dataDir, labelsFile) + ")");
        }
        return new MnistData(split, images.pixels, labels);
    }

    private static String where(Path dataDir, String file) {
        return dataDir == null ? "jar:" + RESOURCE_DIR + "/" + file + ".gz" : dataDir.resolve(file) + "[.gz]";
    }

    private static InputStream open(Path dataDir, String file) throws IOException {
        if (dataDir == null) {
            String resource = RESOURCE_DIR + "/" + file + ".gz";
            InputStream in = MnistData.class.getClassLoader().getResourceAsStream(resource);
            if (in == null) {
                throw new IdxFormatException("resource " + resource + " is missing from the classpath; "
                        + "rebuild the example jar or pass --data-dir");
            }
            return IdxReader.gunzip(in, "jar:" + resource);
        }
        Path gz = dataDir.resolve(file + ".gz");
        Path plain = dataDir.resolve(file);
        try {
            if (Files.isRegularFile(gz)) {
                return IdxReader.gunzip(Files.newInputStream(gz), gz.toString());
            }
            if (Files.isRegularFile(plain)) {
                return new java.io.BufferedInputStream(Files.newInputStream(plain), 1 << 16);
            }
        } catch (NoSuchFileException e) {
            // fall through to the message below
        }
        throw new NoSuchFileException(gz.toString(), null,
                "MNIST file missing in --data-dir (expected " + file + ".gz or " + file + ")");
    }

    public int label(int i) {
        return labels[i];
    }

    /** Minibatches of {@code batchSize} examples (the last one may be smaller), in the given order. */
    public List<DataSet> toDataSets(int batchSize, int[] order) {
        List<DataSet> out = new ArrayList<>((count + batchSize - 1) / batchSize);
        for (int start = 0; start < count; start += batchSize) {
            int rows = Math.min(batchSize, count - start);
            float[] f = new float[rows * PIXELS];
            float[] l = new float[rows * NUM_CLASSES];
            for (int r = 0; r < rows; r++) {
                int ex = order == null ? start + r : order[start + r];
                int src = ex * PIXELS;
                int dst = r * PIXELS;
                for (int p = 0; p < PIXELS; p++) {
                    f[dst + p] = (pixels[src + p] & 0xff) / 255.0f;
                }
                l[r * NUM_CLASSES + labels[ex]] = 1.0f;
            }
            INDArray features = Nd4j.create(f, rows, PIXELS);
            INDArray labelArr = Nd4j.create(l, rows, NUM_CLASSES);
            out.add(new DataSet(features, labelArr));
        }
        return out;
    }

    /** A permutation of 0..count-1 (Fisher-Yates with the given seed). */
    public int[] shuffledOrder(long seed) {
        int[] order = new int[count];
        for (int i = 0; i < count; i++) {
            order[i] = i;
        }
        Random rng = new Random(seed);
        for (int i = count - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }
}
