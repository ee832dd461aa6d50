package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extraction copies of the native library are locked by their JVM and swept by a later load once
 * that JVM is gone, including a JVM killed with SIGKILL (which runs no exit hooks). Real child JVMs
 * with their own {@code java.io.tmpdir}; about 3 s.
 */
class NativeLoaderSweepTest {

    /** The child JVM: loads the library, prints where it went, then waits (hold) or exits. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            NativeLoader.load();
            System.out.println("EXTRACTED " + NativeLoader.extractedTo());
            System.out.flush();
            if (args.length > 0 && args[0].equals("hold")) {
                Thread.sleep(120_000); // killed by the test long before
            }
        }
    }

    private static Process start(Path tmp, String mode) throws IOException {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Djava.io.tmpdir=" + tmp,
                "-cp", System.getProperty("java.class.path"), Child.class.getName()));
        if (mode != null) {
            cmd.add(mode);
        }
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    /** The directory the child reported, read from its first output line. */
    private static Path extractedDir(Process p) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        for (String line; (line = r.readLine()) != null; ) {
            if (line.startsWith("EXTRACTED ")) {
                return Paths.get(line.substring("EXTRACTED ".length()));
            }
            seen.append(line).append('\n');
        }
        throw new AssertionError("the child JVM did not report its extraction:\n" + seen);
    }

    private static Path runToCompletion(Path tmp) throws Exception {
        Process p = start(tmp, null);
        Path dir = extractedDir(p);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not exit");
        assertEquals(0, p.exitValue());
        return dir;
    }

    private static List<String> entries(Path tmp) throws IOException {
        try (Stream<Path> s = Files.list(tmp)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aKilledJvmsCopyIsSweptByTheNextLoadAndALiveOneIsNot(@TempDir Path tmp) throws Exception {
        Process holder = start(tmp, "hold");
        try {
            Path held = extractedDir(holder);
            assertEquals(tmp, held.getParent());
            assertTrue(held.getFileName().toString().startsWith(NativeLoader.EXTRACTION_PREFIX), held.toString());
            assertTrue(Files.isRegularFile(held.resolve("libferrodl.so")));
            assertTrue(Files.isRegularFile(held.resolve(NativeLoader.LOCK_FILE)));

            // a second JVM while the first lives: it does not touch the live copy, and deletes its own at exit
            Path second = runToCompletion(tmp);
            assertNotEquals(held, second);
            assertTrue(Files.isDirectory(held), "a live JVM's copy was swept");
            assertFalse(Files.exists(second), "a normal exit leaves its copy behind");

            holder.destroyForcibly(); // SIGKILL: no shutdown hooks, no deleteOnExit
            assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
            assertTrue(Files.isRegularFile(held.resolve("libferrodl.so")), "the killed JVM's copy stays at first");

            Path third = runToCompletion(tmp);
            assertFalse(Files.exists(held), "the next load did not sweep the killed JVM's copy");
            assertFalse(Files.exists(third));
            assertEquals(List.of(), entries(tmp), "leftovers in " + tmp);
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void sweepSkipsYoungStagingDirectoriesAndDeletesOldOnesAndUnlockedCopies(@TempDir Path tmp) throws Exception {
        Path young = Files.createDirectory(tmp.resolve(NativeLoader.STAGING_PREFIX + "young"));
        Path old = Files.createDirectory(tmp.resolve(NativeLoader.STAGING_PREFIX + "old"));
        Files.writeString(old.resolve("libferrodl.so"), "x");
        Files.setLastModifiedTime(old, FileTime.fromMillis(System.currentTimeMillis()
                - NativeLoader.STAGING_ABANDONED_AFTER.toMillis() - 60_000));
        // a copy whose JVM is gone: its lock file exists, nobody holds the lock
        Path dead = Files.createDirectory(tmp.resolve(NativeLoader.EXTRACTION_PREFIX + "dead"));
        Files.writeString(dead.resolve(NativeLoader.LOCK_FILE), "");
        Files.writeString(dead.resolve("libferrodl.so"), "x");
        Path unrelated = Files.createDirectory(tmp.resolve("some-other-tool"));
        // a copy this JVM holds (as the loader does): kept
        Path mine = NativeLoader.extract(tmp, new java.io.ByteArrayInputStream(new byte[] {1, 2, 3}), "libx.so")
                .getParent();

        assertEquals(2, NativeLoader.sweep(tmp));
        assertTrue(Files.isDirectory(young));
        assertFalse(Files.exists(old));
        assertFalse(Files.exists(dead));
        assertTrue(Files.isDirectory(unrelated));
        assertTrue(Files.isRegularFile(mine.resolve("libx.so")));
    }
}
