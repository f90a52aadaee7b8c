package io.ferrite.broker.metrics;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * A topic's records and bytes in and bytes out to consumers: one set of three counters per network thread, each written only by its thread
 * (a topic's partitions are produced to and fetched from on every network thread). Allocated when the topic is
 * created or loaded, freed when it is deleted (on the admin agent, off the request paths); the topics beyond the
 * counters file's room share one set labelled {@code topic=(others)}.
 */
public final class TopicCounters
{
    /** Counters of a topic per network thread. */
    static final int PER_THREAD = 3;

    final String topic;
    private final AtomicCounter[] recordsIn;
    private final AtomicCounter[] bytesIn;
    private final AtomicCounter[] bytesOut;

    TopicCounters(final String topic, final AtomicCounter[] recordsIn, final AtomicCounter[] bytesIn,
        final AtomicCounter[] bytesOut)
    {
        this.topic = topic;
        this.recordsIn = recordsIn;
        this.bytesIn = bytesIn;
        this.bytesOut = bytesOut;
    }

    void produced(final int thread, final long records, final int bytes)
    {
        recordsIn[thread].getAndAddOrdered(records);
        bytesIn[thread].getAndAddOrdered(bytes);
    }

    void fetched(final int thread, final int bytes)
    {
        bytesOut[thread].getAndAddOrdered(bytes);
    }

    /** Every counter of the topic, for freeing them. */
    AtomicCounter[][] all()
    {
        return new AtomicCounter[][] {recordsIn, bytesIn, bytesOut};
    }
}
