package org.ferrodl.evaluation;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

/**
 * JSON/YAML of evaluations: fields (not getters) are written, so what is saved is exactly the
 * configuration and the counts; unknown fields are refused on reading.
 */
final class EvaluationJson {
    private EvaluationJson() {
    }

    private static ObjectMapper configure(ObjectMapper m) {
        m.setVisibility(PropertyAccessor.ALL, JsonAutoDetect.Visibility.NONE);
        m.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
        m.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
        m.configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);
        return m;
    }

    private static final ObjectMapper JSON = configure(new ObjectMapper());
    private static final ObjectMapper YAML = configure(new ObjectMapper(
            YAMLFactory.builder().disable(YAMLGenerator.Feature.USE_NATIVE_TYPE_ID).build()));

    static String toJson(Object e) {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(e);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("cannot write " + e.getClass().getSimpleName() + " as JSON", ex);
        }
    }

    static String toYaml(Object e) {
        try {
            return YAML.writeValueAsString(e);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("cannot write " + e.getClass().getSimpleName() + " as YAML", ex);
        }
    }

    static <E> E fromJson(String json, Class<E> type) {
        return read(JSON, json, type, "JSON");
    }

    static <E> E fromYaml(String yaml, Class<E> type) {
        return read(YAML, yaml, type, "YAML");
    }

    private static <E> E read(ObjectMapper m, String text, Class<E> type, String what) {
        if (text == null) {
            throw new IllegalArgumentException("no " + what + " given (null)");
        }
        try {
            return m.readValue(text, type);
        } catch (JsonProcessingException ex) {
            throw new IllegalArgumentException("invalid " + type.getSimpleName() + " " + what + ": "
                    + ex.getOriginalMessage(), ex);
        }
    }
}
