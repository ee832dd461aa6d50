package org.ferrodl.linalg.dataset;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.exception.NativeMemoryException;
import org.ferrodl.jni.NativeDataSetCodec;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * A minibatch (or a whole data set) of examples: features, labels and optional masks. Dimension 0
 * of every array is the example. A labels mask is {@code N × 1} (per example) or {@code N × nOut}
 * (per output); a features mask is carried along but not used by dense layers.
 *
 * <p>Serializable with Java serialization and with Kryo without a registrator (heap arrays only).
 * {@link #save(OutputStream)}/{@link #load(InputStream)} use the portable binary format implemented
 * in the native library (docs/DATASET_FORMAT.md). Not thread-safe.
 */
public class DataSet implements Iterable<DataSet>, java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private INDArray features;
    private INDArray labels;
    private INDArray featuresMask;
    private INDArray labelsMask;

    /** An empty DataSet, to be filled with {@link #load(File)} or the setters. */
    public DataSet() {
    }

    /**
     * @param features features, examples along dimension 0
     * @param labels labels, with the same number of examples
     */
    public DataSet(INDArray features, INDArray labels) {
        this(features, labels, null, null);
    }

    /**
     * @param features features
     * @param labels labels
     * @param featuresMask features mask or null
     * @param labelsMask labels mask ({@code N × 1} or {@code N × nOut}) or null
     * @throws DL4JInvalidInputException when the numbers of examples differ
     */
    public DataSet(INDArray features, INDArray labels, INDArray featuresMask, INDArray labelsMask) {
        this.features = features;
        this.labels = labels;
        this.featuresMask = featuresMask;
        this.labelsMask = labelsMask;
        checkConsistent();
    }

    private void checkConsistent() {
        long n = features != null ? rowsOf(features) : labels != null ? rowsOf(labels) : -1;
        check("labels", labels, n);
        check("featuresMask", featuresMask, n);
        check("labelsMask", labelsMask, n);
    }

    private static long rowsOf(INDArray a) {
        return a.rank() == 0 ? 1 : a.size(0);
    }

    private static void check(String what, INDArray a, long n) {
        if (a != null && n >= 0 && rowsOf(a) != n) {
            throw new DL4JInvalidInputException("DataSet: " + what + " has " + rowsOf(a)
                    + " examples (shape " + Arrays.toString(a.shape()) + ") but the features have " + n);
        }
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        try {
            checkConsistent();
        } catch (DL4JInvalidInputException e) {
            throw new InvalidObjectException(e.getMessage());
        }
    }

    /** @return the number of examples (size of dimension 0 of the features), 0 when empty */
    public int numExamples() {
        if (features != null) {
            return (int) rowsOf(features);
        }
        return labels != null ? (int) rowsOf(labels) : 0;
    }

    /** @return the number of feature columns ({@code features.size(1)}) */
    public int numInputs() {
        return (int) features.size(1);
    }

    /** @return the number of label columns ({@code labels.size(1)}) */
    public int numOutcomes() {
        return (int) labels.size(1);
    }

    /** @return the features */
    public INDArray getFeatures() {
        return features;
    }

    /** @param features the features */
    public void setFeatures(INDArray features) {
        this.features = features;
    }

    /** @return the labels */
    public INDArray getLabels() {
        return labels;
    }

    /** @param labels the labels */
    public void setLabels(INDArray labels) {
        this.labels = labels;
    }

    /** @return the features mask, or null */
    public INDArray getFeaturesMaskArray() {
        return featuresMask;
    }

    /** @param featuresMask the features mask, or null */
    public void setFeaturesMaskArray(INDArray featuresMask) {
        this.featuresMask = featuresMask;
    }

    /** @return the labels mask, or null */
    public INDArray getLabelsMaskArray() {
        return labelsMask;
    }

    /** @param labelsMask the labels mask ({@code N × 1} or {@code N × nOut}), or null */
    public void setLabelsMaskArray(INDArray labelsMask) {
        this.labelsMask = labelsMask;
    }

    /** @return true when a features or labels mask is present */
    public boolean hasMaskArrays() {
        return featuresMask != null || labelsMask != null;
    }

    /** @return a deep copy */
    public DataSet copy() {
        return new DataSet(dup(features), dup(labels), dup(featuresMask), dup(labelsMask));
    }

    private static INDArray dup(INDArray a) {
        return a == null ? null : a.dup();
    }

    /**
     * Concatenates DataSets along the example dimension. When some have a mask and others do not,
     * the missing masks are all ones (every value counts). Time series ({@code [n, size, timeSteps]}
     * features or labels) of different lengths are padded with zeros at the end to the longest, and
     * a {@code [N, maxSteps]} mask marks each example's real steps, as the reference does.
     *
     * @param data the DataSets, in order (at least one)
     * @return a new DataSet
     * @throws DL4JInvalidInputException when shapes are incompatible
     */
    public static DataSet merge(List<? extends DataSet> data) {
        if (data == null || data.isEmpty()) {
            throw new IllegalArgumentException("cannot merge an empty list of DataSets");
        }
        if (data.size() == 1) {
            return data.get(0).copy();
        }
        try {
            INDArray[] f = ArrayMerge.merge(collect(data, 0), masks(data, 2), "DataSets: features");
            INDArray[] l = ArrayMerge.merge(collect(data, 1), masks(data, 3), "DataSets: labels");
            return new DataSet(f[0], l[0], f[1], l[1]);
        } catch (IllegalArgumentException e) {
            if (e instanceof DL4JInvalidInputException) {
                throw e;
            }
            throw new DL4JInvalidInputException("cannot merge DataSets: " + e.getMessage(), e);
        }
    }

    private INDArray part(int which) {
        switch (which) {
            case 0:
                return features;
            case 1:
                return labels;
            case 2:
                return featuresMask;
            default:
                return labelsMask;
        }
    }

    private static List<INDArray> collect(List<? extends DataSet> data, int which) {
        List<INDArray> out = new ArrayList<>(data.size());
        for (DataSet d : data) {
            INDArray a = d.part(which);
            if (a == null) {
                throw new DL4JInvalidInputException("cannot merge DataSets: one has no "
                        + (which == 0 ? "features" : "labels"));
            }
            out.add(a);
        }
        return out;
    }

    private static List<INDArray> masks(List<? extends DataSet> data, int which) {
        List<INDArray> out = new ArrayList<>(data.size());
        for (DataSet d : data) {
            out.add(d.part(which));
        }
        return out;
    }

    /**
     * @param from first example (inclusive)
     * @param to last example (exclusive)
     * @return a copy of examples {@code [from, to)}
     */
    public DataSet getRange(int from, int to) {
        return new DataSet(rows(features, from, to), rows(labels, from, to), rows(featuresMask, from, to),
                rows(labelsMask, from, to));
    }

    private static INDArray rows(INDArray a, int from, int to) {
        return a == null ? null : a.getRows(from, to);
    }

    /**
     * @param i example index
     * @return a copy of example {@code i} as a one-example DataSet
     */
    public DataSet get(int i) {
        return getRange(i, i + 1);
    }

    /** @return one DataSet per example, in order */
    public List<DataSet> asList() {
        int n = numExamples();
        List<DataSet> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(get(i));
        }
        return out;
    }

    /**
     * @param num examples per part (&gt; 0); the last part may be smaller
     * @return consecutive parts of this DataSet
     */
    public List<DataSet> batchBy(int num) {
        if (num <= 0) {
            throw new IllegalArgumentException("batch size must be > 0, got " + num);
        }
        int n = numExamples();
        List<DataSet> out = new ArrayList<>((n + num - 1) / num);
        for (int i = 0; i < n; i += num) {
            out.add(getRange(i, Math.min(n, i + num)));
        }
        return out;
    }

    /**
     * Splits in order, as the reference does: the first {@code numHoldout} examples become the
     * training part and the rest the test part.
     *
     * @param numHoldout number of examples in the training part, {@code 0 < numHoldout < numExamples()}
     * @return the split
     */
    public SplitTestAndTrain splitTestAndTrain(int numHoldout) {
        int n = numExamples();
        if (numHoldout <= 0 || numHoldout >= n) {
            throw new IllegalArgumentException("numHoldout must be in (0, " + n + "), got " + numHoldout);
        }
        return new SplitTestAndTrain(getRange(0, numHoldout), getRange(numHoldout, n));
    }

    /**
     * @param fractionTrain fraction of examples (in order) in the training part, in (0, 1)
     * @return the split
     */
    public SplitTestAndTrain splitTestAndTrain(double fractionTrain) {
        int n = (int) Math.round(numExamples() * fractionTrain);
        return splitTestAndTrain(n);
    }

    /**
     * Shuffles the examples in place, reproducibly.
     *
     * @param seed random seed
     */
    public void shuffle(long seed) {
        int n = numExamples();
        List<Integer> order = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(seed));
        features = permute(features, order);
        labels = permute(labels, order);
        featuresMask = permute(featuresMask, order);
        labelsMask = permute(labelsMask, order);
    }

    private static INDArray permute(INDArray a, List<Integer> order) {
        if (a == null) {
            return null;
        }
        List<INDArray> parts = new ArrayList<>(order.size());
        for (int i : order) {
            parts.add(a.getRows(i, i + 1));
        }
        return parts.isEmpty() ? a.dup() : Nd4j.vstack(parts);
    }

    @Override
    public Iterator<DataSet> iterator() {
        return asList().iterator();
    }

    /**
     * Writes this DataSet in the binary format of the native codec. The stream is flushed, not closed.
     *
     * @param to destination stream
     * @throws IOException on a write error
     */
    public void save(OutputStream to) throws IOException {
        if (features == null || labels == null) {
            throw new IllegalStateException("cannot save a DataSet without features and labels");
        }
        byte[] bytes = NativeDataSetCodec.encode(NDArray.internalData(features), features.shape(),
                NDArray.internalData(labels), labels.shape(),
                featuresMask == null ? null : NDArray.internalData(featuresMask),
                featuresMask == null ? null : featuresMask.shape(),
                labelsMask == null ? null : NDArray.internalData(labelsMask),
                labelsMask == null ? null : labelsMask.shape());
        to.write(bytes);
        to.flush();
    }

    /**
     * Writes this DataSet to a file (through a temporary file in the same directory, then renamed).
     *
     * @param to destination file
     * @throws IOException on a write error
     */
    public void save(File to) throws IOException {
        File dir = to.getAbsoluteFile().getParentFile();
        File tmp = File.createTempFile(".ferrodl-dataset-", ".tmp", dir);
        try {
            try (OutputStream out = Files.newOutputStream(tmp.toPath())) {
                save(out);
            }
            Files.move(tmp.toPath(), to.toPath(), StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp.toPath());
        }
    }

    /**
     * Replaces this DataSet's contents with a DataSet read from a stream (read to its end, not closed).
     *
     * @param from source stream
     * @throws IOException on a read error
     * @throws DataSetFormatException when the bytes are not a valid DataSet
     */
    public void load(InputStream from) throws IOException {
        byte[] bytes = from.readAllBytes();
        Object[] parts = NativeDataSetCodec.decode(bytes);
        if (parts == null || parts.length != 8) {
            throw new DataSetFormatException("native DataSet decoder returned an unexpected result");
        }
        INDArray f = array(parts[0], parts[1]);
        INDArray l = array(parts[2], parts[3]);
        INDArray fm = array(parts[4], parts[5]);
        INDArray lm = array(parts[6], parts[7]);
        if (f == null || l == null) {
            throw new DataSetFormatException("decoded DataSet has no features or labels");
        }
        DataSet d = new DataSet(f, l, fm, lm);
        this.features = d.features;
        this.labels = d.labels;
        this.featuresMask = d.featuresMask;
        this.labelsMask = d.labelsMask;
    }

    /**
     * Replaces this DataSet's contents with the DataSet saved in {@code from}.
     *
     * @param from a file written by {@link #save(File)}
     * @throws IOException on a read error
     * @throws DataSetFormatException when the file is not a valid DataSet
     */
    public void load(File from) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(from.toPath()))) {
            load(in);
        } catch (DataSetFormatException e) {
            throw new DataSetFormatException(from + ": " + e.getMessage(), e);
        } catch (NativeMemoryException e) {
            throw new NativeMemoryException(from + ": " + e.getMessage());
        }
    }

    private static INDArray array(Object data, Object shape) {
        if (data == null && shape == null) {
            return null;
        }
        if (!(data instanceof float[]) || !(shape instanceof long[])) {
            throw new DataSetFormatException("native DataSet decoder returned an array without data or shape");
        }
        try {
            return new NDArray((float[]) data, (long[]) shape);
        } catch (IllegalArgumentException e) {
            throw new DataSetFormatException("decoded array is inconsistent: " + e.getMessage(), e);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof DataSet)) {
            return false;
        }
        DataSet d = (DataSet) o;
        return Objects.equals(features, d.features) && Objects.equals(labels, d.labels)
                && Objects.equals(featuresMask, d.featuresMask) && Objects.equals(labelsMask, d.labelsMask);
    }

    @Override
    public int hashCode() {
        return Objects.hash(features, labels, featuresMask, labelsMask);
    }

    @Override
    public String toString() {
        return "===========INPUT===================\n" + features + "\n=================OUTPUT==================\n"
                + labels + (featuresMask == null ? "" : "\n===========INPUT MASK===================\n" + featuresMask)
                + (labelsMask == null ? "" : "\n===========OUTPUT MASK===================\n" + labelsMask);
    }
}
