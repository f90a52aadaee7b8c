package io.ferrite.broker.e2e;

import io.ferrite.broker.metrics.CounterReadings;
import io.ferrite.broker.metrics.CounterTypes;
import io.ferrite.broker.metrics.CountersFile;

import java.io.IOException;
import java.nio.file.Path;

/**
 * How many requests of one API a broker has received since it started, as its request metrics count them
 * ({@code ferrite-counters.dat} in its first log directory, read as {@code ferrite-stat} reads it: the network threads'
 * counters summed); the broker may be this process or another.
 */
public final class RequestCounts
{
    private RequestCounts()
    {
    }

    /** The requests of API key {@code apiKey} received by the broker whose first log directory is {@code logDir}. */
    public static long of(final Path logDir, final int apiKey) throws IOException
    {
        final CountersFile file = CountersFile.open(logDir);
        try
        {
            final Long n = CounterReadings.summed(file.reader())
                .get(new CounterReadings.Figure(CounterTypes.REQUESTS, CounterReadings.ALL_THREADS, apiKey, null));
            return n == null ? 0 : n;
        }
        finally
        {
            file.close();
        }
    }
}
