package io.ferrite.broker;

import java.io.IOException;

/**
 * Where {@link ProducerIds} takes its blocks of {@link ProducerIds#BLOCK} producer ids: {@link ProducerIdFile} on a
 * node alone, the active controller in a cluster ({@code io.ferrite.broker.cluster.ControllerProducerIdBlocks}). Called
 * on {@link ProducerIds}' reserver thread only, one call at a time.
 */
public interface ProducerIdBlocks
{
    /**
     * The next block, reserved for good (no other call, on this node or any other, and no restart gets an id of it
     * again): its first id.
     *
     * @throws Unavailable no block this time, none lost (no answer from the controller yet): tried again after a
     *                     backoff, the callers answered COORDINATOR_LOAD_IN_PROGRESS meanwhile
     * @throws IOException the block could not be made durable (KAFKA_STORAGE_ERROR to the callers)
     */
    long reserve() throws IOException;

    /** Whether the first block is reserved at start, by the thread that makes the {@link ProducerIds}. */
    boolean reservedAtStart();

    /**
     * Closing: a {@link #reserve} waiting for an answer that may never come gives up ({@link Unavailable}); one whose
     * block is already reserved finishes making it durable. Nothing to do where nothing is awaited (the file's blocks).
     */
    default void stopWaiting()
    {
    }

    /** No block this time, and no storage failed: a retriable wait, not KAFKA_STORAGE_ERROR. */
    final class Unavailable extends IOException
    {
        private static final long serialVersionUID = 1L;

        public Unavailable(final String message, final Throwable cause)
        {
            super(message, cause);
        }
    }
}
