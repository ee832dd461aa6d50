package org.ferrodl.nn.api;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;
import org.ferrodl.exception.NativeStateException;

/**
 * Base of every network type that owns a native engine object: holds the handle, releases it once
 * on {@link #close()} (idempotent), and registers a {@link Cleaner} that releases the handle of an
 * owner that becomes unreachable without being closed — a safety net only: close networks
 * explicitly.
 *
 * <p>Lifecycle: created without a handle; a subclass's {@code init()} calls
 * {@link #adoptHandle(long, LongConsumer)} once; after {@code close()} every call through
 * {@link #handle()} or {@link #ensureOpen()} throws {@link NativeStateException} "network is
 * closed". The handle itself is never serialized: subclasses that are {@code Serializable} write
 * what they need and adopt a new handle when read back.
 */
public abstract class NativeHandleOwner implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private HandleState state;
    private Cleaner.Cleanable cleanable;
    private boolean closed;

    /** Holds the native handle; the Cleaner's action. Must not reference the owner. */
    private static final class HandleState implements Runnable {
        private volatile long handle;
        private final LongConsumer destroy;

        HandleState(long handle, LongConsumer destroy) {
            this.handle = handle;
            this.destroy = destroy;
        }

        @Override
        public synchronized void run() {
            long h = handle;
            handle = 0;
            if (h != 0) {
                destroy.accept(h);
            }
        }
    }

    /** Without a handle; see {@link #adoptHandle(long, LongConsumer)}. */
    protected NativeHandleOwner() {
    }

    /**
     * Takes ownership of a freshly created native handle.
     *
     * @param h the handle (non-zero)
     * @param destroy releases a handle; must not capture this owner (use a static method reference
     *     such as {@code NativeNetwork::destroy}), or the owner could never become unreachable
     * @throws NativeStateException for a zero handle or after {@link #close()}
     * @throws IllegalStateException when a handle is already held
     */
    protected final void adoptHandle(long h, LongConsumer destroy) {
        ensureOpen();
        if (state != null) {
            throw new IllegalStateException("this network already holds a native handle");
        }
        if (h == 0) {
            throw new NativeStateException("native network creation returned a null handle");
        }
        state = new HandleState(h, destroy);
        cleanable = CLEANER.register(this, state);
    }

    /** @throws NativeStateException "network is closed" after {@link #close()} */
    protected final void ensureOpen() {
        if (closed) {
            throw new NativeStateException("network is closed");
        }
    }

    /** @return true once a handle was adopted (also after {@link #close()}) */
    protected final boolean hasHandle() {
        return state != null;
    }

    /**
     * @return the live handle
     * @throws NativeStateException before the handle is adopted ("call init() first") or after
     *     {@link #close()}
     */
    protected final long handle() {
        ensureOpen();
        if (state == null) {
            throw new NativeStateException("network is not initialized: call init() first");
        }
        long h = state.handle;
        if (h == 0) {
            throw new NativeStateException("network is closed");
        }
        return h;
    }

    /**
     * The live native handle, for the library's own native modules (Spark's parameter averaging
     * sends from and averages into the engine's arrays through it, without Java copies); users never
     * need it.
     *
     * @return the handle
     * @throws NativeStateException before {@code init()} or after {@link #close()}
     */
    public final long nativeHandle() {
        return handle();
    }

    /** @return true once {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    /** @return true after {@code init()} and before {@link #close()} */
    public boolean isInitCalled() {
        return state != null && !closed;
    }

    /**
     * Releases the native object. Idempotent; afterwards every other method throws
     * {@link NativeStateException}.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (cleanable != null) {
            cleanable.clean();
        }
    }
}
