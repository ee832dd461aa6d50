package org.ferrodl.jni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Properties;
import org.ferrodl.exception.NativeLibraryUnavailableException;

/**
 * Loads the ferrodl native library ({@code libferrodl.so} / {@code .dylib} / {@code .dll}) once per
 * class loader.
 *
 * <p>Search order:
 * <ol>
 *   <li>{@code System.loadLibrary("ferrodl")}, i.e. a directory on {@code java.library.path};</li>
 *   <li>the class-path resource {@code org/ferrodl/native/<os>-<arch>/libferrodl.<ext>} (shipped in
 *       the jar or in the classifier jar {@code ferrodl-native-<os>-<arch>}), copied into a fresh
 *       directory made by {@link Files#createTempDirectory} (both registered for deletion at exit)
 *       and loaded with {@link System#load}.</li>
 * </ol>
 * {@code <os>} is {@code linux}, {@code macos} or {@code windows}; {@code <arch>} is the normalised
 * {@code os.arch} ({@code amd64} becomes {@code x86_64}, {@code arm64} becomes {@code aarch64}).
 *
 * <p>After loading, the version reported by {@link NativeInfo#buildInfo()} must equal this jar's
 * version; a mismatch (for example a stale library on {@code java.library.path}) is refused.
 *
 * <p>Thread-safety: {@link #load()} is thread-safe and idempotent. A failure is remembered and
 * every later call throws a {@link NativeLibraryUnavailableException} with the same message, so a
 * broken installation fails fast and consistently instead of retrying.
 */
public final class NativeLoader {

    /** Base name of the native library. */
    public static final String LIBRARY_NAME = "ferrodl";

    private static final String VERSION_RESOURCE = "/org/ferrodl/ferrodl-version.properties";

    private static final Object LOCK = new Object();
    private static volatile boolean loaded;
    /** guarded by LOCK */
    private static NativeLibraryUnavailableException failure;
    /** guarded by LOCK: the thread inside load(), so that Native* static initializers can re-enter */
    private static Thread loadingThread;
    /** guarded by LOCK: where the library came from, for diagnostics */
    private static String loadedFrom;

    private NativeLoader() {
    }

    /**
     * A platform as used in resource paths and classifier names.
     *
     * @param os normalised operating system: {@code linux}, {@code macos}, {@code windows} or another lower-case name
     * @param arch normalised architecture, for example {@code x86_64} or {@code aarch64}
     * @param osName the raw {@code os.name} value
     * @param osArch the raw {@code os.arch} value
     */
    record Platform(String os, String arch, String osName, String osArch) {
        /** @return {@code <os>-<arch>} */
        String id() {
            return os + "-" + arch;
        }

        /** @return the library file name on this platform */
        String libraryFileName() {
            switch (os) {
                case "macos":
                    return "lib" + LIBRARY_NAME + ".dylib";
                case "windows":
                    return LIBRARY_NAME + ".dll";
                default:
                    return "lib" + LIBRARY_NAME + ".so";
            }
        }

        /** @return the class-path resource holding the library for this platform */
        String resourcePath() {
            return "org/ferrodl/native/" + id() + "/" + libraryFileName();
        }

        /** @return the Maven artifact that ships the library for this platform */
        String classifierJar() {
            return "ferrodl-native-" + id();
        }
    }

    /**
     * Normalises raw {@code os.name}/{@code os.arch} values.
     *
     * @param osName value of {@code os.name}
     * @param osArch value of {@code os.arch}
     * @return the platform
     */
    static Platform resolve(String osName, String osArch) {
        String n = osName == null ? "unknown" : osName.trim().toLowerCase(Locale.ROOT);
        String os;
        if (n.startsWith("linux")) {
            os = "linux";
        } else if (n.startsWith("mac") || n.startsWith("darwin")) {
            os = "macos";
        } else if (n.startsWith("windows")) {
            os = "windows";
        } else {
            os = n.replaceAll("[^a-z0-9]+", "");
        }
        String a = osArch == null ? "unknown" : osArch.trim().toLowerCase(Locale.ROOT);
        String arch;
        switch (a) {
            case "amd64":
            case "x86_64":
            case "x64":
            case "x86-64":
                arch = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                arch = "aarch64";
                break;
            default:
                arch = a.replaceAll("[^a-z0-9_]+", "");
        }
        return new Platform(os, arch, osName, osArch);
    }

    /** @return the platform of this JVM, read from {@code os.name}/{@code os.arch} at call time */
    static Platform currentPlatform() {
        return resolve(System.getProperty("os.name"), System.getProperty("os.arch"));
    }

    /**
     * Loads the native library if it is not loaded yet. Cheap after the first successful call.
     *
     * @throws NativeLibraryUnavailableException if the library cannot be found or loaded, or its
     *     version differs from this jar's; the message says which jar to add
     */
    public static void load() {
        if (loaded) {
            return;
        }
        synchronized (LOCK) {
            if (loaded || loadingThread == Thread.currentThread()) {
                // the second case: a Native* class initializer triggered during the version check
                return;
            }
            if (failure != null) {
                throw new NativeLibraryUnavailableException(failure.getMessage(), failure);
            }
            loadingThread = Thread.currentThread();
            try {
                Platform platform = currentPlatform();
                loadedFrom = loadLibrary(platform, NativeLoader.class.getClassLoader());
                checkVersion(platform, loadedFrom);
                loaded = true;
            } catch (NativeLibraryUnavailableException e) {
                failure = e;
                throw e;
            } catch (RuntimeException | LinkageError e) {
                Platform p = currentPlatform();
                failure = new NativeLibraryUnavailableException("ferrodl native library failed to load on "
                        + describe(p) + ": " + e + ". " + advice(p), e);
                throw failure;
            } finally {
                loadingThread = null;
            }
        }
    }

    /** @return true once {@link #load()} has succeeded */
    public static boolean isLoaded() {
        return loaded;
    }

    /**
     * Finds and loads the library for {@code platform}.
     *
     * @return a description of where it came from
     */
    static String loadLibrary(Platform platform, ClassLoader classLoader) {
        String libraryPathError;
        try {
            System.loadLibrary(LIBRARY_NAME);
            return "java.library.path";
        } catch (UnsatisfiedLinkError e) {
            libraryPathError = e.getMessage();
        }
        return loadFromResource(platform, classLoader, libraryPathError);
    }

    /**
     * Second step of {@link #loadLibrary}: extracts the class-path resource for {@code platform} into
     * a new temporary directory and loads it.
     *
     * @param libraryPathError why the {@code java.library.path} step failed, for the message
     * @return a description of where the library came from
     */
    static String loadFromResource(Platform platform, ClassLoader classLoader, String libraryPathError) {
        String resource = platform.resourcePath();
        ClassLoader cl = classLoader != null ? classLoader : ClassLoader.getSystemClassLoader();
        try (InputStream in = cl.getResourceAsStream(resource)) {
            if (in == null) {
                throw new NativeLibraryUnavailableException("ferrodl native library not found for "
                        + describe(platform) + ": it is not on java.library.path (" + libraryPathError
                        + ") and the class path has no resource " + resource + ". " + advice(platform));
            }
            Path dir = Files.createTempDirectory("ferrodl-native-");
            dir.toFile().deleteOnExit(); // registered first, so deleted after the file
            Path file = dir.resolve(platform.libraryFileName());
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            try {
                System.load(file.toAbsolutePath().toString());
            } catch (UnsatisfiedLinkError e) {
                throw new NativeLibraryUnavailableException("ferrodl native library " + resource
                        + " was found but could not be loaded on " + describe(platform) + ": "
                        + e.getMessage() + ". " + advice(platform), e);
            }
            return "class-path resource " + resource;
        } catch (IOException e) {
            throw new NativeLibraryUnavailableException("ferrodl native library " + resource
                    + " could not be extracted to a temporary directory on " + describe(platform) + ": " + e
                    + ". Check that java.io.tmpdir (" + System.getProperty("java.io.tmpdir")
                    + ") is writable, or put the library on java.library.path.", e);
        }
    }

    private static void checkVersion(Platform platform, String from) {
        String expected = javaVersion();
        String info = NativeInfo.buildInfo();
        String actual;
        try {
            JsonNode node = new ObjectMapper().readTree(info);
            JsonNode v = node.get("version");
            actual = v == null || v.isNull() ? null : v.asText();
        } catch (IOException e) {
            throw new NativeLibraryUnavailableException("ferrodl native library loaded from " + from
                    + " returned unreadable build info '" + info + "'. " + advice(platform), e);
        }
        if (!expected.equals(actual)) {
            throw new NativeLibraryUnavailableException("ferrodl native library version mismatch: the library "
                    + "loaded from " + from + " is version " + actual + " but the ferrodl jars are version "
                    + expected + ". Remove the stale library from java.library.path or use the matching "
                    + platform.classifierJar() + "-" + expected + ".jar on " + describe(platform) + ".");
        }
    }

    /**
     * Reads this jar's version from {@code org/ferrodl/ferrodl-version.properties}.
     *
     * @return the version, for example {@code 0.1.0}
     */
    public static String javaVersion() {
        try (InputStream in = NativeLoader.class.getResourceAsStream(VERSION_RESOURCE)) {
            if (in == null) {
                throw new NativeLibraryUnavailableException("resource " + VERSION_RESOURCE
                        + " is missing from the ferrodl-core jar; the jar is damaged");
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version");
            if (v == null || v.isBlank() || v.contains("${")) {
                throw new NativeLibraryUnavailableException("resource " + VERSION_RESOURCE
                        + " has no filtered 'version' entry; the ferrodl-core jar was not built by Maven");
            }
            return v.trim();
        } catch (IOException e) {
            throw new NativeLibraryUnavailableException("cannot read " + VERSION_RESOURCE + ": " + e, e);
        }
    }

    static String describe(Platform p) {
        return "os.name=" + p.osName() + ", os.arch=" + p.osArch() + " (platform " + p.id() + ")";
    }

    static String advice(Platform p) {
        return "Add the jar org.ferrodl:" + p.classifierJar() + " (which contains " + p.resourcePath()
                + ") to the class path of the driver and of every executor, or set -Djava.library.path to a "
                + "directory containing " + p.libraryFileName() + " built for " + p.id() + ".";
    }
}
