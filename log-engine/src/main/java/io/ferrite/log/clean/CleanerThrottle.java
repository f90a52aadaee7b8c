package io.ferrite.log.clean;

/**
 * The cleaner's I/O budget ({@code log.cleaner.io.max.bytes.per.second}, Kafka's {@code Throttler}):
 * a clean reports the bytes it read or wrote and may be held until the budget allows more. Shared by
 * a node's cleaner threads.
 */
@FunctionalInterface
public interface CleanerThrottle
{
    /** No limit. */
    CleanerThrottle NONE = bytes -> { };

    /**
     * @param bytes bytes just read or written by a clean
     * @throws InterruptedException when the cleaner thread is stopped while held
     */
    void maybeThrottle(long bytes) throws InterruptedException;
}
