package org.ferrodl.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.URLClassLoader;
import org.ferrodl.exception.NativeLibraryUnavailableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Platform resolution and the failure message; needs no native library. */
class NativeLoaderPlatformTest {

    @Test
    void normalisesOsAndArch() {
        NativeLoader.Platform p = NativeLoader.resolve("Linux", "amd64");
        assertEquals("linux-x86_64", p.id());
        assertEquals("org/ferrodl/native/linux-x86_64/libferrodl.so", p.resourcePath());
        assertEquals("org.ferrodl:ferrodl-native:0.1.0:linux-x86_64", p.classifierCoordinates("0.1.0"));
        assertEquals("ferrodl-native-0.1.0-linux-x86_64.jar", p.classifierJar("0.1.0"));

        NativeLoader.Platform mac = NativeLoader.resolve("Mac OS X", "aarch64");
        assertEquals("macos-aarch64", mac.id());
        assertEquals("libferrodl.dylib", mac.libraryFileName());

        NativeLoader.Platform win = NativeLoader.resolve("Windows 11", "x86_64");
        assertEquals("windows-x86_64", win.id());
        assertEquals("org/ferrodl/native/windows-x86_64/ferrodl.dll", win.resourcePath());

        assertEquals("linux-aarch64", NativeLoader.resolve("Linux", "arm64").id());
        assertEquals("linux-ppc64le", NativeLoader.resolve("Linux", "ppc64le").id());
    }

    @Test
    void missingLibraryNamesPlatformAndClassifierJar() {
        NativeLoader.Platform fake = NativeLoader.resolve("Linux", "sparcv9");
        // an empty class loader: no resource for any platform
        ClassLoader empty = new URLClassLoader(new URL[0], null);
        NativeLibraryUnavailableException e = assertThrows(NativeLibraryUnavailableException.class,
                () -> NativeLoader.loadFromResource(fake, empty, "no ferrodl in java.library.path"));
        String m = e.getMessage();
        assertTrue(m.contains("os.name=Linux"), m);
        assertTrue(m.contains("os.arch=sparcv9"), m);
        assertTrue(m.contains("linux-sparcv9"), m);
        String v = NativeLoader.javaVersion();
        assertTrue(m.contains("Add the jar ferrodl-native-" + v + "-linux-sparcv9.jar"), m);
        assertTrue(m.contains("org.ferrodl:ferrodl-native:" + v + ":linux-sparcv9"), m);
        assertTrue(m.contains("org.ferrodl:ferrodl-native-platform:" + v), m);
        assertTrue(m.contains("org/ferrodl/native/linux-sparcv9/libferrodl.so"), m);
        assertTrue(m.contains("java.library.path"), m);
    }

    @Test
    void brokenResourceIsExtractedThenRejectedWithAClearMessage(@TempDir Path root) throws Exception {
        NativeLoader.Platform fake = NativeLoader.resolve("Linux", "fakearch");
        Path lib = root.resolve("org/ferrodl/native/linux-fakearch/libferrodl.so");
        Files.createDirectories(lib.getParent());
        Files.write(lib, "not an ELF file".getBytes(StandardCharsets.UTF_8));
        ClassLoader cl = new URLClassLoader(new URL[] {root.toUri().toURL()}, null);
        NativeLibraryUnavailableException e = assertThrows(NativeLibraryUnavailableException.class,
                () -> NativeLoader.loadFromResource(fake, cl, "not on java.library.path"));
        String m = e.getMessage();
        assertTrue(m.contains("was found but could not be loaded"), m);
        assertTrue(m.contains("ferrodl-native-" + NativeLoader.javaVersion() + "-linux-fakearch.jar"), m);
    }

    @Test
    void javaVersionIsTheFilteredMavenVersion() {
        String v = NativeLoader.javaVersion();
        assertFalse(v.contains("${"), v);
        assertTrue(v.matches("\\d+\\.\\d+\\.\\d+.*"), v);
    }
}
