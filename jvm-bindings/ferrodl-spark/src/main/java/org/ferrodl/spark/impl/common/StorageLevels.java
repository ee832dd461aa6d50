package org.ferrodl.spark.impl.common;

import java.util.List;
import org.apache.spark.storage.StorageLevel;

/** Converts Spark storage levels to and from their constant names for JSON/YAML. */
public final class StorageLevels {
    private static final List<String> NAMES = List.of("NONE", "DISK_ONLY", "DISK_ONLY_2", "DISK_ONLY_3",
            "MEMORY_ONLY", "MEMORY_ONLY_2", "MEMORY_ONLY_SER", "MEMORY_ONLY_SER_2", "MEMORY_AND_DISK",
            "MEMORY_AND_DISK_2", "MEMORY_AND_DISK_SER", "MEMORY_AND_DISK_SER_2", "OFF_HEAP");

    private StorageLevels() {
    }

    /** The constant name of {@code level}, or {@code null} for {@code null}. */
    public static String name(StorageLevel level) {
        if (level == null) {
            return null;
        }
        for (String name : NAMES) {
            if (StorageLevel.fromString(name).equals(level)) {
                return name;
            }
        }
        throw new IllegalArgumentException("storage level " + level.description()
                + " has no constant name; use one of " + NAMES);
    }

    /** The storage level named {@code name}, or {@code null} for {@code null}. */
    public static StorageLevel fromName(String name) {
        if (name == null) {
            return null;
        }
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown storage level '" + name + "'; valid: " + NAMES);
        }
        return StorageLevel.fromString(name);
    }
}
