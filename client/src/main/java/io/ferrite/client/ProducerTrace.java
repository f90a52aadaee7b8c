package io.ferrite.client;

/**
 * Where a producer's records are on their way, for a latency profile ({@link ProducerConfig#trace}): called on the
 * thread running the duty cycle, at each stage a record passes between {@link Producer#send} and its
 * {@link CompletionHandler}. A batch is named by the tag of its first record and its record count (the tags the
 * application gave, in send order within a partition). Off (null) by default; the producer then makes no call.
 * An implementation takes its own timestamps and must not block: it runs inside the duty cycle it measures.
 */
public interface ProducerTrace
{
    /** A batch went into a Produce request (encoded into its connection's send buffer, not yet written). */
    void onDrained(long firstTag, int recordCount);

    /** A connection's send buffer was taken whole by the socket: every request drained to it until now is written. */
    void onWritten(int nodeId);

    /** A batch's answer was read (or its request failed), with its error code; its completions follow. */
    void onAnswered(long firstTag, int recordCount, short errorCode);
}
