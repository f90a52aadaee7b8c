package io.ferrite.wire.message;

/**
 * The elements of an array field, one at a time: {@code for (var t = r.topics(); t.hasNext(); ) { t.next(); ... }}.
 * Every generated struct decoder other than a message's root implements it for itself, as does
 * {@link StringArrayDecoder}, so a walk written once can serve the arrays of several APIs whose
 * elements differ only in their generated types. The decoder is the current element: {@link #next}
 * moves it on and returns it, allocating nothing.
 *
 * @param <T> the decoder's own type
 */
public interface ArrayDecoder<T extends ArrayDecoder<T>>
{
    /** Elements in the array; -1 when the array is null. */
    int elementCount();

    boolean isNullArray();

    boolean hasNext();

    /** Moves to the next element and returns this decoder, now reading it. */
    T next();
}
