package io.ferrite.log;

/**
 * Told when an fsync covers a log up to an offset (the group committer's thread calls it): the
 * moment appends below that offset may be acknowledged in {@code fsync} durability.
 */
@FunctionalInterface
public interface DurabilityListener
{
    void onDurable(PartitionLog log, long durableOffset);

    /**
     * An fsync of {@code log} failed (once per log, on the flushing thread): nothing it has not yet
     * made durable ever will be (see {@link PartitionLog#fsyncFailure()}), so whoever waits for
     * that can answer now.
     */
    default void onFsyncFailed(final PartitionLog log, final Throwable cause)
    {
    }

    DurabilityListener NONE = (log, offset) -> { };
}
