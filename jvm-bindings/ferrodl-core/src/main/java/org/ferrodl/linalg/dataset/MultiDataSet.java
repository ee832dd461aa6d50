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
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.DataSetFormatException;
import org.ferrodl.exception.NativeMemoryException;
import org.ferrodl.jni.NativeDataSetCodec;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * Examples for a network with several inputs and outputs: one features array per input, one labels
 * array per output, and optional masks (see {@link org.ferrodl.linalg.dataset.api.MultiDataSet} for
 * the mask-list convention). Every array has the same number of examples along dimension 0; the
 * constructors and {@link #load} check it.
 *
 * <p>Serializable with Java serialization and with Kryo without a registrator (heap arrays only).
 * {@link #save(OutputStream)}/{@link #load(InputStream)} use the portable binary format implemented
 * in the native library (docs/DATASET_FORMAT.md, "MultiDataSet"). Not thread-safe.
 */
public class MultiDataSet implements org.ferrodl.linalg.dataset.api.MultiDataSet {
    private static final long serialVersionUID = 1L;

    private INDArray[] features;
    private INDArray[] labels;
    private INDArray[] featuresMaskArrays;
    private INDArray[] labelsMaskArrays;

    /** An empty MultiDataSet (no arrays), to be filled with {@link #load(File)} or the setters. */
    public MultiDataSet() {
        this(new INDArray[0], new INDArray[0]);
    }

    /**
     * One input and one output.
     *
     * @param features features
     * @param labels labels, or null for unlabelled data
     */
    public MultiDataSet(INDArray features, INDArray labels) {
        this(features, labels, null, null);
    }

    /**
     * One input and one output, with masks.
     *
     * @param features features
     * @param labels labels, or null
     * @param featuresMask features mask, or null
     * @param labelsMask labels mask, or null
     */
    public MultiDataSet(INDArray features, INDArray labels, INDArray featuresMask, INDArray labelsMask) {
        this(new INDArray[] {features}, labels == null ? new INDArray[0] : new INDArray[] {labels},
                featuresMask == null ? null : new INDArray[] {featuresMask},
                labelsMask == null ? null : new INDArray[] {labelsMask});
    }

    /**
     * @param features one array per network input
     * @param labels one array per network output (empty or null for unlabelled data)
     */
    public MultiDataSet(INDArray[] features, INDArray[] labels) {
        this(features, labels, null, null);
    }

    /**
     * @param features one array per network input
     * @param labels one array per network output (empty or null for unlabelled data)
     * @param featuresMaskArrays one entry per features array (entries may be null), or null
     * @param labelsMaskArrays one entry per labels array (entries may be null), or null
     * @throws DL4JInvalidInputException when the numbers of examples or of mask entries disagree
     */
    public MultiDataSet(INDArray[] features, INDArray[] labels, INDArray[] featuresMaskArrays,
                        INDArray[] labelsMaskArrays) {
        this.features = features == null ? new INDArray[0] : features;
        this.labels = labels == null ? new INDArray[0] : labels;
        this.featuresMaskArrays = featuresMaskArrays;
        this.labelsMaskArrays = labelsMaskArrays;
        checkConsistent();
    }

    /**
     * The MultiDataSet with one input and one output that holds the same arrays as a DataSet (not
     * copied), as a graph with one input and one output consumes it.
     *
     * @param dataSet the DataSet
     * @return a MultiDataSet sharing its arrays
     */
    public static MultiDataSet fromDataSet(DataSet dataSet) {
        if (dataSet == null) {
            throw new IllegalArgumentException("DataSet is null");
        }
        return new MultiDataSet(dataSet.getFeatures(), dataSet.getLabels(), dataSet.getFeaturesMaskArray(),
                dataSet.getLabelsMaskArray());
    }

    private void checkConsistent() {
        checkMaskCount("featuresMaskArrays", featuresMaskArrays, "features", features.length);
        checkMaskCount("labelsMaskArrays", labelsMaskArrays, "labels", labels.length);
        long n = -1;
        String first = null;
        for (int part = 0; part < 4; part++) {
            INDArray[] arrays = part(part);
            if (arrays == null) {
                continue;
            }
            for (int i = 0; i < arrays.length; i++) {
                INDArray a = arrays[i];
                if (a == null) {
                    if (part < 2) {
                        throw new DL4JInvalidInputException("MultiDataSet: " + PART_NAMES[part] + "[" + i
                                + "] is null (only mask entries may be null)");
                    }
                    continue;
                }
                long rows = rowsOf(a);
                if (n < 0) {
                    n = rows;
                    first = PART_NAMES[part] + "[" + i + "]";
                } else if (rows != n) {
                    throw new DL4JInvalidInputException("MultiDataSet: " + PART_NAMES[part] + "[" + i + "] has "
                            + rows + " examples (shape " + Arrays.toString(a.shape()) + ") but " + first
                            + " has " + n);
                }
            }
        }
    }

    private static final String[] PART_NAMES = {"features", "labels", "featuresMaskArrays", "labelsMaskArrays"};

    private static void checkMaskCount(String what, INDArray[] masks, String of, int n) {
        if (masks != null && masks.length != n) {
            throw new DL4JInvalidInputException("MultiDataSet: " + what + " has " + masks.length + " entries but there"
                    + " are " + n + " " + of + " arrays (one entry per array, null where there is no mask)");
        }
    }

    private INDArray[] part(int which) {
        switch (which) {
            case 0:
                return features;
            case 1:
                return labels;
            case 2:
                return featuresMaskArrays;
            default:
                return labelsMaskArrays;
        }
    }

    private static long rowsOf(INDArray a) {
        return a.rank() == 0 ? 1 : a.size(0);
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        try {
            if (features == null || labels == null) {
                throw new DL4JInvalidInputException("MultiDataSet: features or labels list is null");
            }
            checkConsistent();
        } catch (DL4JInvalidInputException e) {
            throw new InvalidObjectException(e.getMessage());
        }
    }

    @Override
    public int numFeatureArrays() {
        return features.length;
    }

    @Override
    public int numLabelsArrays() {
        return labels.length;
    }

    @Override
    public INDArray[] getFeatures() {
        return features;
    }

    @Override
    public INDArray getFeatures(int index) {
        return features[index];
    }

    @Override
    public void setFeatures(INDArray[] features) {
        this.features = features == null ? new INDArray[0] : features;
    }

    @Override
    public void setFeatures(int idx, INDArray features) {
        this.features[idx] = features;
    }

    @Override
    public INDArray[] getLabels() {
        return labels;
    }

    @Override
    public INDArray getLabels(int index) {
        return labels[index];
    }

    @Override
    public void setLabels(INDArray[] labels) {
        this.labels = labels == null ? new INDArray[0] : labels;
    }

    @Override
    public void setLabels(int idx, INDArray labels) {
        this.labels[idx] = labels;
    }

    @Override
    public boolean hasMaskArrays() {
        return anyPresent(featuresMaskArrays) || anyPresent(labelsMaskArrays);
    }

    private static boolean anyPresent(INDArray[] arrays) {
        if (arrays != null) {
            for (INDArray a : arrays) {
                if (a != null) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public INDArray[] getFeaturesMaskArrays() {
        return featuresMaskArrays;
    }

    @Override
    public INDArray getFeaturesMaskArray(int index) {
        return featuresMaskArrays == null ? null : featuresMaskArrays[index];
    }

    @Override
    public void setFeaturesMaskArrays(INDArray[] maskArrays) {
        this.featuresMaskArrays = maskArrays;
    }

    @Override
    public void setFeaturesMaskArray(int idx, INDArray maskArray) {
        if (featuresMaskArrays == null) {
            featuresMaskArrays = new INDArray[features.length];
        }
        featuresMaskArrays[idx] = maskArray;
    }

    @Override
    public INDArray[] getLabelsMaskArrays() {
        return labelsMaskArrays;
    }

    @Override
    public INDArray getLabelsMaskArray(int index) {
        return labelsMaskArrays == null ? null : labelsMaskArrays[index];
    }

    @Override
    public void setLabelsMaskArray(INDArray[] labelsMaskArrays) {
        this.labelsMaskArrays = labelsMaskArrays;
    }

    @Override
    public void setLabelsMaskArray(int idx, INDArray labelsMaskArray) {
        if (labelsMaskArrays == null) {
            labelsMaskArrays = new INDArray[labels.length];
        }
        labelsMaskArrays[idx] = labelsMaskArray;
    }

    @Override
    public int numExamples() {
        if (features.length > 0 && features[0] != null) {
            return (int) rowsOf(features[0]);
        }
        return labels.length > 0 && labels[0] != null ? (int) rowsOf(labels[0]) : 0;
    }

    /** @return a deep copy */
    public MultiDataSet copy() {
        return new MultiDataSet(dup(features), dup(labels), dup(featuresMaskArrays), dup(labelsMaskArrays));
    }

    private static INDArray[] dup(INDArray[] arrays) {
        if (arrays == null) {
            return null;
        }
        INDArray[] out = new INDArray[arrays.length];
        for (int i = 0; i < arrays.length; i++) {
            out[i] = arrays[i] == null ? null : arrays[i].dup();
        }
        return out;
    }

    /**
     * Concatenates MultiDataSets along the example dimension. All must have the same numbers of
     * features and labels arrays. Where some have a mask for an array and others do not, the missing
     * masks are all ones (every value counts); a mask list stays null when no part has a mask.
     *
     * @param data the MultiDataSets, in order (at least one)
     * @return a new MultiDataSet
     * @throws DL4JInvalidInputException when the array counts or shapes are incompatible
     */
    public static MultiDataSet merge(Collection<? extends org.ferrodl.linalg.dataset.api.MultiDataSet> data) {
        if (data == null || data.isEmpty()) {
            throw new IllegalArgumentException("cannot merge an empty collection of MultiDataSets");
        }
        List<org.ferrodl.linalg.dataset.api.MultiDataSet> list = new ArrayList<>(data);
        org.ferrodl.linalg.dataset.api.MultiDataSet head = list.get(0);
        int nf = head.numFeatureArrays();
        int nl = head.numLabelsArrays();
        for (int k = 1; k < list.size(); k++) {
            org.ferrodl.linalg.dataset.api.MultiDataSet m = list.get(k);
            if (m.numFeatureArrays() != nf || m.numLabelsArrays() != nl) {
                throw new DL4JInvalidInputException("cannot merge MultiDataSets: the first has " + nf + " features and "
                        + nl + " labels arrays, number " + k + " has " + m.numFeatureArrays() + " and "
                        + m.numLabelsArrays());
            }
        }
        if (list.size() == 1) {
            return toImpl(head).copy();
        }
        try {
            INDArray[][] f = mergeSlots(list, 0, nf);
            INDArray[][] l = mergeSlots(list, 1, nl);
            return new MultiDataSet(f[0], l[0], f[1], l[1]);
        } catch (IllegalArgumentException e) {
            if (e instanceof DL4JInvalidInputException) {
                throw e;
            }
            throw new DL4JInvalidInputException("cannot merge MultiDataSets: " + e.getMessage(), e);
        }
    }

    /**
     * @param data the MultiDataSets, in order (at least one)
     * @return {@link #merge(Collection)} of them
     */
    public static MultiDataSet merge(org.ferrodl.linalg.dataset.api.MultiDataSet... data) {
        return merge(Arrays.asList(data));
    }

    private static MultiDataSet toImpl(org.ferrodl.linalg.dataset.api.MultiDataSet m) {
        if (m instanceof MultiDataSet) {
            return (MultiDataSet) m;
        }
        return new MultiDataSet(m.getFeatures(), m.getLabels(), m.getFeaturesMaskArrays(), m.getLabelsMaskArrays());
    }

    private static INDArray[] partOf(org.ferrodl.linalg.dataset.api.MultiDataSet m, int which) {
        switch (which) {
            case 0:
                return m.getFeatures();
            case 1:
                return m.getLabels();
            case 2:
                return m.getFeaturesMaskArrays();
            default:
                return m.getLabelsMaskArrays();
        }
    }

    /** Merged arrays of one kind (features or labels) and their masks (null when no slot has one). */
    private static INDArray[][] mergeSlots(List<org.ferrodl.linalg.dataset.api.MultiDataSet> list, int which, int n) {
        INDArray[] arrays = new INDArray[n];
        INDArray[] masks = new INDArray[n];
        boolean anyMask = false;
        for (int i = 0; i < n; i++) {
            List<INDArray> parts = new ArrayList<>(list.size());
            List<INDArray> partMasks = new ArrayList<>(list.size());
            for (org.ferrodl.linalg.dataset.api.MultiDataSet m : list) {
                parts.add(partOf(m, which)[i]);
                INDArray[] ms = partOf(m, which + 2);
                partMasks.add(ms == null ? null : ms[i]);
            }
            INDArray[] merged = ArrayMerge.merge(parts, partMasks, "MultiDataSets: " + PART_NAMES[which] + "[" + i + "]");
            arrays[i] = merged[0];
            masks[i] = merged[1];
            anyMask |= merged[1] != null;
        }
        return new INDArray[][] {arrays, anyMask ? masks : null};
    }

    /**
     * @param from first example (inclusive)
     * @param to last example (exclusive)
     * @return a copy of examples {@code [from, to)}
     */
    public MultiDataSet getRange(int from, int to) {
        return new MultiDataSet(rows(features, from, to), rows(labels, from, to), rows(featuresMaskArrays, from, to),
                rows(labelsMaskArrays, from, to));
    }

    private static INDArray[] rows(INDArray[] arrays, int from, int to) {
        if (arrays == null) {
            return null;
        }
        INDArray[] out = new INDArray[arrays.length];
        for (int i = 0; i < arrays.length; i++) {
            out[i] = arrays[i] == null ? null : arrays[i].getRows(from, to);
        }
        return out;
    }

    /**
     * @param i example index
     * @return a copy of example {@code i} as a one-example MultiDataSet
     */
    public MultiDataSet get(int i) {
        return getRange(i, i + 1);
    }

    @Override
    public List<org.ferrodl.linalg.dataset.api.MultiDataSet> asList() {
        int n = numExamples();
        List<org.ferrodl.linalg.dataset.api.MultiDataSet> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(get(i));
        }
        return out;
    }

    /**
     * @param num examples per part (&gt; 0); the last part may be smaller
     * @return consecutive parts of this MultiDataSet
     */
    public List<MultiDataSet> batchBy(int num) {
        if (num <= 0) {
            throw new IllegalArgumentException("batch size must be > 0, got " + num);
        }
        int n = numExamples();
        List<MultiDataSet> out = new ArrayList<>((n + num - 1) / num);
        for (int i = 0; i < n; i += num) {
            out.add(getRange(i, Math.min(n, i + num)));
        }
        return out;
    }

    /**
     * Splits in order: the first {@code numHoldout} examples and the rest.
     *
     * @param numHoldout number of examples in the first (training) part, {@code 0 < numHoldout < numExamples()}
     * @return {@code {train, test}}
     */
    public MultiDataSet[] splitTestAndTrain(int numHoldout) {
        int n = numExamples();
        if (numHoldout <= 0 || numHoldout >= n) {
            throw new IllegalArgumentException("numHoldout must be in (0, " + n + "), got " + numHoldout);
        }
        return new MultiDataSet[] {getRange(0, numHoldout), getRange(numHoldout, n)};
    }

    @Override
    public void shuffle() {
        shuffle(new Random().nextLong());
    }

    /**
     * Shuffles the examples in place, reproducibly; every array gets the same permutation.
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
        featuresMaskArrays = permute(featuresMaskArrays, order);
        labelsMaskArrays = permute(labelsMaskArrays, order);
    }

    private static INDArray[] permute(INDArray[] arrays, List<Integer> order) {
        if (arrays == null) {
            return null;
        }
        INDArray[] out = new INDArray[arrays.length];
        for (int k = 0; k < arrays.length; k++) {
            INDArray a = arrays[k];
            if (a == null) {
                continue;
            }
            List<INDArray> parts = new ArrayList<>(order.size());
            for (int i : order) {
                parts.add(a.getRows(i, i + 1));
            }
            out[k] = parts.isEmpty() ? a.dup() : Nd4j.vstack(parts);
        }
        return out;
    }

    @Override
    public void save(OutputStream to) throws IOException {
        checkConsistent();
        Object[] f = flatten(features);
        Object[] l = flatten(labels);
        Object[] fm = flatten(featuresMaskArrays);
        Object[] lm = flatten(labelsMaskArrays);
        byte[] bytes = NativeDataSetCodec.encodeMulti((float[][]) f[0], (long[][]) f[1], (float[][]) l[0],
                (long[][]) l[1], (float[][]) fm[0], (long[][]) fm[1], (float[][]) lm[0], (long[][]) lm[1]);
        to.write(bytes);
        to.flush();
    }

    /** {data[][], shapes[][]} of a list (null entries stay null; a null list gives nulls). */
    private static Object[] flatten(INDArray[] arrays) {
        if (arrays == null) {
            return new Object[] {null, null};
        }
        float[][] data = new float[arrays.length][];
        long[][] shapes = new long[arrays.length][];
        for (int i = 0; i < arrays.length; i++) {
            if (arrays[i] != null) {
                data[i] = NDArray.internalData(arrays[i]);
                shapes[i] = arrays[i].shape();
            }
        }
        return new Object[] {data, shapes};
    }

    @Override
    public void save(File to) throws IOException {
        File dir = to.getAbsoluteFile().getParentFile();
        File tmp = File.createTempFile(".ferrodl-multidataset-", ".tmp", dir);
        try {
            try (OutputStream out = Files.newOutputStream(tmp.toPath())) {
                save(out);
            }
            Files.move(tmp.toPath(), to.toPath(), StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp.toPath());
        }
    }

    @Override
    public void load(InputStream from) throws IOException {
        byte[] bytes = from.readAllBytes();
        Object[] parts = NativeDataSetCodec.decodeMulti(bytes);
        if (parts == null || parts.length != 8) {
            throw new DataSetFormatException("native MultiDataSet decoder returned an unexpected result");
        }
        INDArray[] f = arrays(parts[0], parts[1], false);
        INDArray[] l = arrays(parts[2], parts[3], false);
        if (f == null || l == null) {
            throw new DataSetFormatException("decoded MultiDataSet has no features or labels list");
        }
        MultiDataSet m = new MultiDataSet(f, l, arrays(parts[4], parts[5], true), arrays(parts[6], parts[7], true));
        this.features = m.features;
        this.labels = m.labels;
        this.featuresMaskArrays = m.featuresMaskArrays;
        this.labelsMaskArrays = m.labelsMaskArrays;
    }

    @Override
    public void load(File from) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(from.toPath()))) {
            load(in);
        } catch (DataSetFormatException e) {
            throw new DataSetFormatException(from + ": " + e.getMessage(), e);
        } catch (NativeMemoryException e) {
            throw new NativeMemoryException(from + ": " + e.getMessage());
        }
    }

    private static INDArray[] arrays(Object data, Object shapes, boolean slots) {
        if (data == null && shapes == null) {
            return null;
        }
        if (!(data instanceof float[][]) || !(shapes instanceof long[][])
                || ((float[][]) data).length != ((long[][]) shapes).length) {
            throw new DataSetFormatException("native MultiDataSet decoder returned a list without data or shapes");
        }
        float[][] d = (float[][]) data;
        long[][] s = (long[][]) shapes;
        INDArray[] out = new INDArray[d.length];
        for (int i = 0; i < d.length; i++) {
            if (d[i] == null && s[i] == null && slots) {
                continue;
            }
            if (d[i] == null || s[i] == null) {
                throw new DataSetFormatException("native MultiDataSet decoder returned an array without data or shape");
            }
            try {
                out[i] = new NDArray(d[i], s[i]);
            } catch (IllegalArgumentException e) {
                throw new DataSetFormatException("decoded array is inconsistent: " + e.getMessage(), e);
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof MultiDataSet)) {
            return false;
        }
        MultiDataSet m = (MultiDataSet) o;
        return Arrays.equals(features, m.features) && Arrays.equals(labels, m.labels)
                && Arrays.equals(featuresMaskArrays, m.featuresMaskArrays)
                && Arrays.equals(labelsMaskArrays, m.labelsMaskArrays);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * (31 * Arrays.hashCode(features) + Arrays.hashCode(labels))
                + Arrays.hashCode(featuresMaskArrays)) + Arrays.hashCode(labelsMaskArrays);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("MultiDataSet: ").append(features.length).append(" features arrays, ")
                .append(labels.length).append(" labels arrays, ").append(numExamples()).append(" examples");
        for (int p = 0; p < 4; p++) {
            INDArray[] arrays = part(p);
            if (arrays == null) {
                continue;
            }
            for (int i = 0; i < arrays.length; i++) {
                sb.append("\n=== ").append(PART_NAMES[p]).append('[').append(i).append("] ===\n").append(arrays[i]);
            }
        }
        return sb.toString();
    }
}
