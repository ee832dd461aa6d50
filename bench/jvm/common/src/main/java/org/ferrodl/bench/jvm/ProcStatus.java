package org.ferrodl.bench.jvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;

/** Memory of this process from {@code /proc/self/status} (Linux), in kB. */
public final class ProcStatus {
    /** VmHWM: peak resident set; VmRSS: resident now, split into anonymous, file-backed and shared memory. */
    private static final String[] KEYS = {"VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"};

    private ProcStatus() {
    }

    public static Map<String, Long> memoryKb() {
        Map<String, Long> out = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                for (String k : KEYS) {
                    if (line.startsWith(k + ":")) {
                        String v = line.substring(k.length() + 1).trim();
                        out.put(k + "_kB", Long.parseLong(v.split("\\s+")[0]));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            out.put("proc_status_unreadable", -1L);
        }
        Runtime rt = Runtime.getRuntime();
        out.put("javaHeapUsed_kB", (rt.totalMemory() - rt.freeMemory()) / 1024);
        out.put("javaHeapCommitted_kB", rt.totalMemory() / 1024);
        return out;
    }
}
