package org.ferrodl.spark.impl.common;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Prepares up to {@code depth} elements of {@code source} on a background daemon thread while the
 * caller consumes earlier ones. An exception in the producer is rethrown to the consumer. Call
 * {@link #close()} (also done at the end of the stream) to stop the thread early.
 */
public final class PrefetchingIterator<T> implements Iterator<T>, AutoCloseable {
    private static final Object END = new Object();

    private final BlockingQueue<Object> queue;
    private final Thread producer;
    private volatile boolean closed;
    private Object next;

    public PrefetchingIterator(Iterator<T> source, int depth, String threadName) {
        if (depth <= 0) {
            throw new IllegalArgumentException("prefetch depth must be positive, got " + depth);
        }
        this.queue = new ArrayBlockingQueue<>(depth);
        this.producer = new Thread(() -> {
            try {
                while (!closed && source.hasNext()) {
                    put(source.next());
                }
                put(END);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable t) {
                try {
                    put(new Failure(t));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, threadName);
        producer.setDaemon(true);
        producer.start();
    }

    private void put(Object o) throws InterruptedException {
        while (!closed) {
            if (queue.offer(o, 100, TimeUnit.MILLISECONDS)) {
                return;
            }
        }
    }

    private record Failure(Throwable cause) {
    }

    @Override
    public boolean hasNext() {
        if (next == null) {
            try {
                next = queue.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for prefetched data", e);
            }
        }
        if (next instanceof Failure f) {
            close();
            throw new IllegalStateException("prefetch thread failed: " + f.cause(), f.cause());
        }
        if (next == END) {
            close();
            return false;
        }
        return true;
    }

    @Override
    @SuppressWarnings("unchecked")
    public T next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        T value = (T) next;
        next = null;
        return value;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            producer.interrupt();
        }
    }
}
