package org.ferrodl.common.primitives;

import java.io.Serializable;
import java.util.Objects;

/**
 * Two values, as the reference's {@code org.nd4j.common.primitives.Pair} (returned, for example, by
 * a training worker's {@code processMinibatchWithStats}). Immutable; serializable when its values
 * are.
 *
 * @param <F> the first value's type
 * @param <S> the second value's type
 */
public final class Pair<F, S> implements Serializable {
    private static final long serialVersionUID = 1L;

    private final F first;
    private final S second;

    public Pair(F first, S second) {
        this.first = first;
        this.second = second;
    }

    public static <F, S> Pair<F, S> of(F first, S second) {
        return new Pair<>(first, second);
    }

    public static <F, S> Pair<F, S> pairOf(F first, S second) {
        return new Pair<>(first, second);
    }

    public F getFirst() {
        return first;
    }

    public S getSecond() {
        return second;
    }

    public F getLeft() {
        return first;
    }

    public S getRight() {
        return second;
    }

    public F getKey() {
        return first;
    }

    public S getValue() {
        return second;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Pair<?, ?> p && Objects.equals(first, p.first) && Objects.equals(second, p.second);
    }

    @Override
    public int hashCode() {
        return Objects.hash(first, second);
    }

    @Override
    public String toString() {
        return "Pair(" + first + ", " + second + ")";
    }
}
