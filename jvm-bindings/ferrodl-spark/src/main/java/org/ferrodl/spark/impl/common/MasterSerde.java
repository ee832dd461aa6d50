package org.ferrodl.spark.impl.common;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import org.ferrodl.exception.DL4JInvalidConfigException;

/**
 * JSON and YAML of training masters: unknown fields are refused, and YAML carries polymorphic types
 * in the same {@code type} property as JSON (not YAML tags such as {@code !<adaptive>}), so both
 * can be written by hand.
 */
public final class MasterSerde {
    private MasterSerde() {}

    private static ObjectMapper json() {
        return new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)
                .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false); // stateless training hooks
    }

    private static ObjectMapper yaml() {
        return new ObjectMapper(YAMLFactory.builder().disable(YAMLGenerator.Feature.USE_NATIVE_TYPE_ID).build())
                .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)
                .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);
    }

    public static String toJson(Object master) {
        try {
            return json().writerWithDefaultPrettyPrinter().writeValueAsString(master);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + master.getClass().getSimpleName() + " as JSON", e);
        }
    }

    public static String toYaml(Object master) {
        try {
            return yaml().writeValueAsString(master);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + master.getClass().getSimpleName() + " as YAML", e);
        }
    }

    /** Reads JSON; malformed input or unknown fields become a {@link DL4JInvalidConfigException}. */
    public static <T> T fromJson(String json, Class<T> type) {
        try {
            return json().readValue(json, type);
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid " + type.getSimpleName() + " JSON: " + e.getOriginalMessage());
        }
    }

    /** Reads YAML; malformed input or unknown fields become a {@link DL4JInvalidConfigException}. */
    public static <T> T fromYaml(String yaml, Class<T> type) {
        try {
            return yaml().readValue(yaml, type);
        } catch (JsonProcessingException e) {
            throw new DL4JInvalidConfigException("invalid " + type.getSimpleName() + " YAML: " + e.getOriginalMessage());
        }
    }
}
