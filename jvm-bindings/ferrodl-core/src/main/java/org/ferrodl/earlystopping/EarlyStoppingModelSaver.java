package org.ferrodl.earlystopping;

import java.io.IOException;
import java.io.Serializable;
import org.ferrodl.nn.api.Model;

/** Keeps the best and the latest model of an early-stopping run (in memory, on disk, ...). */
public interface EarlyStoppingModelSaver<T extends Model> extends Serializable {

    /** Saves {@code net}, whose score {@code score} is the best so far. */
    void saveBestModel(T net, double score) throws IOException;

    /** Saves {@code net} as the latest model (when the configuration asks for it). */
    void saveLatestModel(T net, double score) throws IOException;

    /** @return the best model saved, or null when none was */
    T getBestModel() throws IOException;

    /** @return the latest model saved, or null when none was */
    T getLatestModel() throws IOException;
}
