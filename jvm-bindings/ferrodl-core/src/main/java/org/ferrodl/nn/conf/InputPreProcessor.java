package org.ferrodl.nn.conf;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;
import org.ferrodl.nn.conf.preprocessor.CnnToFeedForwardPreProcessor;
import org.ferrodl.nn.conf.preprocessor.CnnToRnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.FeedForwardToCnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.FeedForwardToRnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.RnnToCnnPreProcessor;
import org.ferrodl.nn.conf.preprocessor.RnnToFeedForwardPreProcessor;

/**
 * Reshapes a layer's input between activation kinds (convolutional, feed-forward, recurrent), as the
 * reference's preprocessors do. In a {@link ComputationGraphConfiguration} it is attached to a layer
 * ({@code addLayer(name, layer, preProcessor, inputs...)}) or used on its own in a
 * {@link org.ferrodl.nn.conf.graph.PreprocessorVertex}. A preprocessor is a configuration only: the
 * engine applies it (and checks it against the incoming shape at {@code build()}).
 *
 * <p>Serialized with a {@code "type"} property naming the class (docs/ARCHITECTURE.md §2.4).
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = CnnToFeedForwardPreProcessor.class, name = "CnnToFeedForwardPreProcessor"),
    @JsonSubTypes.Type(value = FeedForwardToCnnPreProcessor.class, name = "FeedForwardToCnnPreProcessor"),
    @JsonSubTypes.Type(value = RnnToFeedForwardPreProcessor.class, name = "RnnToFeedForwardPreProcessor"),
    @JsonSubTypes.Type(value = FeedForwardToRnnPreProcessor.class, name = "FeedForwardToRnnPreProcessor"),
    @JsonSubTypes.Type(value = CnnToRnnPreProcessor.class, name = "CnnToRnnPreProcessor"),
    @JsonSubTypes.Type(value = RnnToCnnPreProcessor.class, name = "RnnToCnnPreProcessor")
})
public interface InputPreProcessor extends Serializable, Cloneable {
    /** @return a deep copy */
    InputPreProcessor clone();
}
