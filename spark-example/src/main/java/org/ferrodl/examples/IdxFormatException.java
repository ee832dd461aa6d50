package org.ferrodl.examples;

import java.io.IOException;

/** An IDX file that cannot be used: wrong magic number, bad header, truncated data, not gzip, ... */
public class IdxFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    public IdxFormatException(String message) {
        super(message);
    }

    public IdxFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
