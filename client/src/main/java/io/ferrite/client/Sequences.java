package io.ferrite.client;

/**
 * Sequence numbers as the broker keeps them: 0 to {@link Integer#MAX_VALUE}, then 0 again. Their order is the
 * order of the steps forward from one to the other, so a batch numbered just after the wrap comes after one just
 * before it.
 */
final class Sequences
{
    private static final int HALF = 1 << 30;

    private Sequences()
    {
    }

    /** {@code sequence + by}, wrapped to 0 after Integer.MAX_VALUE ({@code sequence} -1: none yet, gives {@code by - 1}). */
    static int increment(final int sequence, final int by)
    {
        return sequence > Integer.MAX_VALUE - by ? by - (Integer.MAX_VALUE - sequence) - 1 : sequence + by;
    }

    /** Steps forward from {@code from} to {@code to}, modulo 2^31. */
    static int distance(final int from, final int to)
    {
        return (to - from) & Integer.MAX_VALUE;
    }

    /** Whether {@code a} comes before {@code b} (fewer than 2^30 steps forward from it). */
    static boolean before(final int a, final int b)
    {
        final int d = distance(a, b);
        return d != 0 && d < HALF;
    }
}
