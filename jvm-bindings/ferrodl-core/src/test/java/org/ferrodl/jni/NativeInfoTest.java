package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.ferrodl.exception.NativePanicException;
import org.ferrodl.exception.NativeStateException;
import org.junit.jupiter.api.Test;

/** Needs the native library. */
class NativeInfoTest {

    @Test
    void buildInfoReportsTheJarVersion() throws Exception {
        JsonNode info = new ObjectMapper().readTree(NativeInfo.buildInfo());
        assertEquals(NativeLoader.javaVersion(), info.get("version").asText());
        for (String field : new String[] {"gitSha", "target", "profile", "features"}) {
            assertTrue(info.has(field), "buildInfo lacks " + field + ": " + info);
        }
        assertTrue(NativeLoader.isLoaded());
    }

    @Test
    void concurrentLoadsAreIdempotent() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                results.add(pool.submit((Callable<String>) () -> {
                    NativeLoader.load();
                    return NativeInfo.buildInfo();
                }));
            }
            String first = results.get(0).get();
            for (Future<String> f : results) {
                assertEquals(first, f.get());
            }
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void panicBecomesNativePanicExceptionWithTheMessage() {
        NativePanicException e = assertThrows(NativePanicException.class,
                () -> NativeInfo.panicForTest("deliberate panic 42"));
        assertTrue(e.getMessage().contains("deliberate panic 42"), e.getMessage());
        assertTrue(e instanceof NativeStateException);
        // the JVM and the library are still usable afterwards
        assertFalse(NativeInfo.buildInfo().isEmpty());
        NativePanicException again = assertThrows(NativePanicException.class,
                () -> NativeInfo.panicForTest("second"));
        assertTrue(again.getMessage().contains("second"), again.getMessage());
    }

    @Test
    void unknownHandlesAreExceptionsNotCrashes() {
        assertThrows(NativeStateException.class, () -> NativeNetwork.numParams(123456789L));
        assertThrows(NativeStateException.class, () -> NativeNetwork.params(0L));
        assertThrows(NativeStateException.class, () -> NativeNetwork.destroy(-5L));
    }

    @Test
    void threadCountIsSetAtRunTimeAndZeroRestoresTheDefault() {
        try {
            NativeInfo.setNumThreads(3);
            assertEquals(3, NativeInfo.numThreads());
            NativeInfo.setNumThreads(1);
            assertEquals(1, NativeInfo.numThreads());
        } finally {
            NativeInfo.setNumThreads(0);
        }
        assertEquals(Runtime.getRuntime().availableProcessors(), NativeInfo.numThreads());
    }
}
