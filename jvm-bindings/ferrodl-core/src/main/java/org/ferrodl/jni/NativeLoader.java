package org.ferrodl.jni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
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
 *   <li>the class-path resource {@code org/ferrodl/native/<os>-<arch>/libferrodl.<ext>}, shipped in
 *       the classifier jar {@code org.ferrodl:ferrodl-native:<version>:<os>-<arch>} (or in an
 *       uber-jar built with it), copied into a fresh directory {@code ferrodl-native-*} of
 *       {@code java.io.tmpdir} and loaded with {@link System#load}.</li>
 * </ol>
 *
 * <p>Extraction copies are locked and swept: each extraction directory holds a lock file that this
 * JVM locks ({@link FileChannel#lock}) before the directory gets its visible name and keeps locked
 * until it exits, however it exits. The directory is deleted at a normal exit; a JVM that is killed
 * (an executor lost with {@code kill -9}, an OOM kill) leaves it behind, and the next load in any
 * JVM deletes every {@code ferrodl-native-*} directory whose lock it can take, since the operating
 * system released the dead JVM's lock with the process.
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
    /** guarded by LOCK: the directory the library was extracted to, null when it was not extracted */
    private static Path extractedTo;

    /** Name prefix of the extraction directories in {@code java.io.tmpdir}. */
    static final String EXTRACTION_PREFIX = "ferrodl-native-";
    /** Prefix of a directory still being set up (not yet locked): never swept while young. */
    static final String STAGING_PREFIX = ".ferrodl-native-staging-";
    /** The lock file inside each extraction directory. */
    static final String LOCK_FILE = "ferrodl.lock";
    /** Staging directories older than this are leftovers of a JVM killed while extracting. */
    static final Duration STAGING_ABANDONED_AFTER = Duration.ofHours(1);
    /** The locked channels of this JVM's extractions, open (so locked) until the JVM exits. */
    private static final List<FileChannel> HELD_LOCKS = Collections.synchronizedList(new ArrayList<>());

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

        /** @return the Maven coordinates of the jar that ships the library for this platform */
        String classifierCoordinates(String version) {
            return "org.ferrodl:ferrodl-native:" + version + ":" + id();
        }

        /** @return the file name of that jar */
        String classifierJar(String version) {
            return "ferrodl-native-" + version + "-" + id() + ".jar";
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
            } catch (UnsatisfiedLinkError | RuntimeException e) {
                Platform p = currentPlatform();
                failure = new NativeLibraryUnavailableException("ferrodl native library failed to load on "
                        + describe(p) + ": " + e + ". " + advice(p), e);
                throw failure;
            } catch (LinkageError e) {
                // a Java class is missing or incompatible: the native jar is not the problem
                failure = new NativeLibraryUnavailableException("ferrodl could not start its native library: " + e
                        + ". The ferrodl jars on the class path are incomplete or mixed (for example a bundle "
                        + "built for another Spark line, or a dependency of ferrodl-core in a version it was not "
                        + "built with).", e);
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

    /** @return the directory this JVM extracted the library to, or null (not loaded, or not extracted) */
    static Path extractedTo() {
        synchronized (LOCK) {
            return extractedTo;
        }
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
     * Second step of {@link #loadLibrary}: sweeps the extraction directories of dead JVMs, extracts
     * the class-path resource for {@code platform} into a new locked directory and loads it.
     *
     * @param libraryPathError why the {@code java.library.path} step failed, for the message
     * @return a description of where the library came from
     */
    static String loadFromResource(Platform platform, ClassLoader classLoader, String libraryPathError) {
        String resource = platform.resourcePath();
        ClassLoader cl = classLoader != null ? classLoader : ClassLoader.getSystemClassLoader();
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        try (InputStream in = cl.getResourceAsStream(resource)) {
            if (in == null) {
                throw new NativeLibraryUnavailableException("ferrodl native library not found for "
                        + describe(platform) + ": it is not on java.library.path (" + libraryPathError
                        + ") and the class path has no resource " + resource + ". " + advice(platform));
            }
            sweep(tmp);
            Path file = extract(tmp, in, platform.libraryFileName());
            try {
                System.load(file.toAbsolutePath().toString());
            } catch (UnsatisfiedLinkError e) {
                throw new NativeLibraryUnavailableException("ferrodl native library " + resource
                        + " was found but could not be loaded on " + describe(platform) + ": "
                        + e.getMessage() + ". " + advice(platform), e);
            }
            synchronized (LOCK) {
                extractedTo = file.getParent();
            }
            return "class-path resource " + resource + " (extracted to " + file + ")";
        } catch (IOException e) {
            throw new NativeLibraryUnavailableException("ferrodl native library " + resource
                    + " could not be extracted to a temporary directory on " + describe(platform) + ": " + e
                    + ". Check that java.io.tmpdir (" + tmp + ") is writable, or put the library on "
                    + "java.library.path.", e);
        }
    }

    /**
     * Copies {@code in} to {@code <tmp>/ferrodl-native-<random>/<fileName>}. The directory is
     * created under a staging name, its lock file locked, and only then renamed to its visible
     * name, so a sweeper never sees an extraction directory whose lock is not held by a live JVM.
     *
     * @return the extracted file
     */
    static Path extract(Path tmp, InputStream in, String fileName) throws IOException {
        Path staging = Files.createTempDirectory(tmp, STAGING_PREFIX);
        FileChannel lock = FileChannel.open(staging.resolve(LOCK_FILE), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE);
        try {
            lock.lock(); // released by the operating system when this JVM ends, however it ends
            Path file = staging.resolve(fileName);
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            Path dir = tmp.resolve(EXTRACTION_PREFIX + staging.getFileName().toString()
                    .substring(STAGING_PREFIX.length()));
            Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
            // registered directory first: deleteOnExit deletes in reverse order
            dir.toFile().deleteOnExit();
            dir.resolve(LOCK_FILE).toFile().deleteOnExit();
            dir.resolve(fileName).toFile().deleteOnExit();
            HELD_LOCKS.add(lock);
            return dir.resolve(fileName);
        } catch (IOException | RuntimeException e) {
            lock.close();
            deleteTree(staging);
            throw e;
        }
    }

    /**
     * Deletes the extraction directories in {@code tmp} left by JVMs that are gone: those whose lock
     * file this JVM can lock. Directories of live JVMs (lock held), of this JVM, and of other users
     * (no access) are left alone; staging directories only once older than
     * {@link #STAGING_ABANDONED_AFTER}. Best effort: a problem with one directory skips it.
     *
     * @return the number of directories deleted
     */
    static int sweep(Path tmp) {
        int swept = 0;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp,
                d -> d.getFileName().toString().startsWith(EXTRACTION_PREFIX)
                        || d.getFileName().toString().startsWith(STAGING_PREFIX))) {
            for (Path dir : dirs) {
                if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                if (dir.getFileName().toString().startsWith(STAGING_PREFIX)) {
                    FileTime t = Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS);
                    if (t.toMillis() > System.currentTimeMillis() - STAGING_ABANDONED_AFTER.toMillis()) {
                        continue;
                    }
                }
                if (deleteIfAbandoned(dir)) {
                    swept++;
                }
            }
        } catch (IOException | SecurityException e) {
            // an unreadable tmpdir: nothing to sweep; extraction reports its own problems
        }
        return swept;
    }

    private static boolean deleteIfAbandoned(Path dir) {
        Path lockFile = dir.resolve(LOCK_FILE);
        if (!Files.exists(lockFile, LinkOption.NOFOLLOW_LINKS)) {
            // an extraction directory always has its lock file: this one lost it, or is not ours
            return deleteTree(dir);
        }
        try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
            FileLock lock = ch.tryLock();
            if (lock == null) {
                return false; // its JVM is alive
            }
            return deleteTree(dir); // deleted while we hold the lock; the channel closes after
        } catch (OverlappingFileLockException e) {
            return false; // this JVM's own extraction (e.g. from another class loader)
        } catch (IOException | SecurityException e) {
            return false; // another user's directory, or it vanished meanwhile
        }
    }

    /** Deletes a directory and the files in it (extraction directories are flat); true if gone. */
    private static boolean deleteTree(Path dir) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
            return true;
        } catch (IOException | SecurityException e) {
            return false;
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
                    + platform.classifierCoordinates(expected) + " (" + platform.classifierJar(expected) + ") on "
                    + describe(platform) + ".");
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
        String version;
        try {
            version = javaVersion();
        } catch (NativeLibraryUnavailableException e) {
            version = "<ferrodl version>";
        }
        return "Add the jar " + p.classifierJar(version) + " (Maven: " + p.classifierCoordinates(version)
                + ", which contains " + p.resourcePath() + "; or org.ferrodl:ferrodl-native-platform:" + version
                + " for every platform built) to the class path of the driver and of every executor "
                + "(spark-submit --jars or --packages), or set -Djava.library.path to a directory containing "
                + p.libraryFileName() + " built for " + p.id() + ".";
    }
}
