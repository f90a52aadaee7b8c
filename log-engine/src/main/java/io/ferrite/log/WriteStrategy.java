package io.ferrite.log;

/**
 * How the active segment's bytes reach the file. Both keep the file preallocated (sparse) to the
 * segment's capacity and publish the written length after the bytes; readers see the same page
 * cache either way.
 */
public enum WriteStrategy
{
    /**
     * Copy into a shared memory mapping of the file. Blocks ahead of the write position are
     * allocated with {@code write()} of zeros and their pages touched beforehand, so that a full
     * disk is an {@code IOException} there rather than a SIGBUS in a mapped store, and appends take
     * no page faults.
     */
    MAPPED,
    /** {@code FileChannel.write} from the (off-heap) source buffer at the write position. */
    CHANNEL
}
