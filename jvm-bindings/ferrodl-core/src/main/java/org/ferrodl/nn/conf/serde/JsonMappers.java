package org.ferrodl.nn.conf.serde;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

/**
 * The Jackson mappers of ferrodl configurations: field-based (getters and setters are ignored),
 * strict about unknown properties, and for YAML with the polymorphic type written as an ordinary
 * {@code type} property (no YAML tags), so that JSON and YAML carry the same fields.
 *
 * <p>Thread-safety: the returned mappers are fully configured and safe to share between threads;
 * do not reconfigure them.
 */
public final class JsonMappers {
    private static final ObjectMapper JSON = configure(new ObjectMapper());
    private static final ObjectMapper YAML = configure(new ObjectMapper(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.USE_NATIVE_TYPE_ID)
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .build()));

    private JsonMappers() {
    }

    private static ObjectMapper configure(ObjectMapper m) {
        m.setVisibility(PropertyAccessor.ALL, JsonAutoDetect.Visibility.NONE);
        m.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
        m.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        m.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        m.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        m.enable(SerializationFeature.INDENT_OUTPUT);
        m.disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
        return m;
    }

    /** @return the shared JSON mapper */
    public static ObjectMapper getMapper() {
        return JSON;
    }

    /** @return the shared YAML mapper */
    public static ObjectMapper getMapperYaml() {
        return YAML;
    }
}
