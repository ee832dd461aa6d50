package org.ferrodl.exception;

/**
 * The ferrodl native library could not be loaded, or the loaded one does not match this jar's
 * version. The message names the platform ({@code os.name}/{@code os.arch}) and the classifier jar
 * ({@code ferrodl-native-<version>-<os>-<arch>.jar}, Maven {@code org.ferrodl:ferrodl-native:<version>:<os>-<arch>})
 * that provides the library for it.
 */
public class NativeLibraryUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message.
     *
     * @param message what went wrong and, where possible, how to fix it
     */
    public NativeLibraryUnavailableException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a message and a cause.
     *
     * @param message what went wrong and, where possible, how to fix it
     * @param cause the underlying failure
     */
    public NativeLibraryUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
