package org.ferrodl.linalg.dataset.api;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.util.List;
import org.ferrodl.linalg.api.ndarray.INDArray;

/**
 * Examples for a network with several inputs and/or outputs (a {@code ComputationGraph}): one
 * features array per network input, one labels array per network output, and optional masks for
 * each. Dimension 0 of every array is the example.
 *
 * <p>Mask lists: {@code getFeaturesMaskArrays()} is null when no input has a mask; otherwise it has
 * one entry per features array, null where that input has no mask (likewise for the labels).
 */
public interface MultiDataSet extends Serializable {

    /** @return the number of features arrays (network inputs) */
    int numFeatureArrays();

    /** @return the number of labels arrays (network outputs) */
    int numLabelsArrays();

    /** @return the features arrays, one per network input */
    INDArray[] getFeatures();

    /**
     * @param index features array index
     * @return that features array
     */
    INDArray getFeatures(int index);

    /** @param features the features arrays */
    void setFeatures(INDArray[] features);

    /**
     * @param idx features array index
     * @param features the new array
     */
    void setFeatures(int idx, INDArray features);

    /** @return the labels arrays, one per network output */
    INDArray[] getLabels();

    /**
     * @param index labels array index
     * @return that labels array
     */
    INDArray getLabels(int index);

    /** @param labels the labels arrays */
    void setLabels(INDArray[] labels);

    /**
     * @param idx labels array index
     * @param labels the new array
     */
    void setLabels(int idx, INDArray labels);

    /** @return true when any features or labels mask is present */
    boolean hasMaskArrays();

    /** @return the features masks (null entries where absent), or null when there are none */
    INDArray[] getFeaturesMaskArrays();

    /**
     * @param index features array index
     * @return its mask, or null
     */
    INDArray getFeaturesMaskArray(int index);

    /** @param maskArrays features masks (one entry per features array, entries may be null), or null */
    void setFeaturesMaskArrays(INDArray[] maskArrays);

    /**
     * @param idx features array index
     * @param maskArray its mask, or null
     */
    void setFeaturesMaskArray(int idx, INDArray maskArray);

    /** @return the labels masks (null entries where absent), or null when there are none */
    INDArray[] getLabelsMaskArrays();

    /**
     * @param index labels array index
     * @return its mask, or null
     */
    INDArray getLabelsMaskArray(int index);

    /** @param labelsMaskArrays labels masks (one entry per labels array, entries may be null), or null */
    void setLabelsMaskArray(INDArray[] labelsMaskArrays);

    /**
     * @param idx labels array index
     * @param labelsMaskArray its mask, or null
     */
    void setLabelsMaskArray(int idx, INDArray labelsMaskArray);

    /** @return the number of examples (dimension 0 of the first features array), 0 when empty */
    int numExamples();

    /**
     * Writes this MultiDataSet in the native binary format (docs/DATASET_FORMAT.md); the stream is
     * flushed, not closed.
     *
     * @param to destination
     * @throws IOException on a write error
     */
    void save(OutputStream to) throws IOException;

    /**
     * @param to destination file (written through a temporary file, then renamed)
     * @throws IOException on a write error
     */
    void save(File to) throws IOException;

    /**
     * Replaces the contents with a MultiDataSet read from the stream (read to its end, not closed).
     *
     * @param from source
     * @throws IOException on a read error
     * @throws org.ferrodl.exception.DataSetFormatException when the bytes are not a valid MultiDataSet
     */
    void load(InputStream from) throws IOException;

    /**
     * @param from a file written by {@link #save(File)}
     * @throws IOException on a read error
     * @throws org.ferrodl.exception.DataSetFormatException naming the file when it is not valid
     */
    void load(File from) throws IOException;

    /** @return one MultiDataSet per example, in order */
    List<MultiDataSet> asList();

    /** Shuffles the examples in place (all arrays with the same permutation). */
    void shuffle();
}
