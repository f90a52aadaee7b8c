package io.ferrite.log;

/**
 * Told when an fsync covers a log up to an offset (the group committer's thread calls it): the
 * moment appends below that offset may be acknowledged in {@code fsync} durability.
 */
@FunctionalInterface
public interface DurabilityListener
{
    void onDurable(PartitionLog log, long durableOffset);

    DurabilityListener NONE = (log, offset) -> { };
}
