package org.ferrodl.spark.impl.common;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * The directory one export writes into, owner-only ({@code rwx------}), and its files
 * ({@code rw-------}), each permission set explicitly after creation so that the umask cannot
 * change it.
 *
 * <p>A {@code file:} directory is written with {@code java.nio}. Hadoop's local file system sets
 * each permission by starting a {@code chmod} process when Hadoop's native library is absent (it is
 * on Spark's own distributions) and writes a checksum file beside each data file: 25-55 ms per
 * exported minibatch on 2 cores (2026-11-29: 250 files of 50 kB in 6.1-6.6 s through Hadoop and
 * 0.18 s through java.nio; inside an executor, 250 minibatches in 10.5-13.8 s), which was 83 % of
 * a gradient-sharing fit from an unpersisted RDD. Every other scheme (hdfs://, s3a://, ...) goes
 * through Hadoop's FileSystem as before.
 */
abstract class ExportFolder {
    /** The folder {@code dir} (a Hadoop path string), created if needed, with its permission set. */
    static ExportFolder open(String dir) throws IOException {
        Path folder = new Path(dir);
        FileSystem fs = folder.getFileSystem(new Configuration());
        if ("file".equals(fs.getScheme())) {
            return new Local(folder, fs);
        }
        return new Hadoop(folder, fs);
    }

    final Path folder;

    private ExportFolder(Path folder) {
        this.folder = folder;
    }

    /** Creates (or replaces) file {@code name} in the folder, to be written and closed by the caller. */
    abstract OutputStream create(String name) throws IOException;

    /** The path string of file {@code name}, as {@link DataSetExport#load} reads it. */
    String pathOf(String name) {
        return new Path(folder, name).toString();
    }

    /** Sets the file's permission after it is closed (Hadoop's streams may recreate it on close). */
    abstract void closed(String name) throws IOException;

    private static final class Hadoop extends ExportFolder {
        private final FileSystem fs;
        private final FsPermission filePermission = new FsPermission(DataSetExport.FILE_PERMISSION);

        Hadoop(Path folder, FileSystem fs) throws IOException {
            super(folder);
            this.fs = fs;
            FsPermission dirPermission = new FsPermission(DataSetExport.DIRECTORY_PERMISSION);
            fs.mkdirs(folder, dirPermission);
            fs.setPermission(folder, dirPermission);
        }

        @Override
        OutputStream create(String name) throws IOException {
            Path file = new Path(folder, name);
            return fs.create(file, filePermission, true, fs.getConf().getInt("io.file.buffer.size", 4096),
                    fs.getDefaultReplication(file), fs.getDefaultBlockSize(file), null);
        }

        @Override
        void closed(String name) throws IOException {
            fs.setPermission(new Path(folder, name), filePermission);
        }
    }

    private static final class Local extends ExportFolder {
        // DataSetExport's permissions, in java.nio's terms (FsPermission prints them as "rwx------")
        private static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString(
                new FsPermission(DataSetExport.DIRECTORY_PERMISSION).toString());
        private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString(
                new FsPermission(DataSetExport.FILE_PERMISSION).toString());
        private static final EnumSet<StandardOpenOption> WRITE = EnumSet.of(StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);

        private final java.nio.file.Path dir;
        private final boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

        Local(Path folder, FileSystem fs) throws IOException {
            super(folder);
            // the path as the local file system resolves it (relative paths against its working directory)
            this.dir = Paths.get(fs.makeQualified(folder).toUri());
            Files.createDirectories(dir.getParent());
            try {
                Files.createDirectory(dir, attributes(DIRECTORY));
            } catch (FileAlreadyExistsException e) {
                // another partition of the same fit on this executor made it first
                if (!Files.isDirectory(dir)) {
                    throw e;
                }
            }
            if (posix) {
                Files.setPosixFilePermissions(dir, DIRECTORY);
            }
        }

        private FileAttribute<?>[] attributes(Set<PosixFilePermission> permissions) {
            // created with the permission already (never readable by others, even for a moment)
            return posix ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(permissions)}
                    : new FileAttribute<?>[0];
        }

        @Override
        OutputStream create(String name) throws IOException {
            return new BufferedOutputStream(Channels.newOutputStream(
                    Files.newByteChannel(dir.resolve(name), WRITE, attributes(FILE))), 1 << 16);
        }

        @Override
        void closed(String name) throws IOException {
            if (posix) {
                Files.setPosixFilePermissions(dir.resolve(name), FILE);
            }
        }
    }
}
