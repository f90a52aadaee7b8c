package io.ferrite.broker.api;

import org.agrona.MutableDirectBuffer;

import java.util.function.ToIntFunction;

/**
 * A response encoder whose body is one array (of topics, of resources) and the API's names for
 * starting and ending it, given once as lambdas and method references, so a walk shared between
 * APIs can write any of their responses without allocating.
 *
 * @param encoder the response's encoder
 * @param start   wraps the encoder at an offset, with a version, and declares the array's count;
 *                returns the array's encoder
 * @param end     ends the response; returns its length
 * @param <E>     the response's encoder
 * @param <A>     its array's encoder
 */
record ArrayResponse<E, A>(E encoder, Start<E, A> start, ToIntFunction<E> end)
{
    /** Starts a response at {@code outOffset}, declaring {@code count} elements; returns the elements' encoder. */
    @FunctionalInterface
    interface Start<E, A>
    {
        A start(E encoder, MutableDirectBuffer out, int outOffset, short version, int count);
    }

    A start(final MutableDirectBuffer out, final int outOffset, final short version, final int count)
    {
        return start.start(encoder, out, outOffset, version, count);
    }

    /** Ends the response; returns its length. */
    int finish()
    {
        return end.applyAsInt(encoder);
    }
}
