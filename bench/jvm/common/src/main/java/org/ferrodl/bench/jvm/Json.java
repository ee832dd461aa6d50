package org.ferrodl.bench.jvm;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** One flat JSON object, written as one line (the benchmark's output format). */
public final class Json {
    private final Map<String, String> fields = new LinkedHashMap<>();

    public static Json of(String type) {
        return new Json().put("type", type);
    }

    public Json put(String key, String value) {
        fields.put(key, value == null ? "null" : quote(value));
        return this;
    }

    public Json put(String key, long value) {
        fields.put(key, Long.toString(value));
        return this;
    }

    public Json put(String key, double value) {
        fields.put(key, Double.isFinite(value) ? String.format(Locale.ROOT, "%.6g", value) : "null");
        return this;
    }

    public Json put(String key, boolean value) {
        fields.put(key, Boolean.toString(value));
        return this;
    }

    /** {@code value} must already be valid JSON. */
    public Json putRaw(String key, String value) {
        fields.put(key, value);
        return this;
    }

    public Json putAll(Map<String, Long> values) {
        values.forEach(this::put);
        return this;
    }

    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("{");
        fields.forEach((k, v) -> {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append(quote(k)).append(':').append(v);
        });
        return b.append('}').toString();
    }

    /** Prints the object as one line on stdout and flushes. */
    public void emit() {
        System.out.println(this);
        System.out.flush();
    }
}
