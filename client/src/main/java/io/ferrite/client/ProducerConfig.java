package io.ferrite.client;

import io.ferrite.wire.compress.CompressionType;

/**
 * The producer's settings, with kafka-clients' names and defaults where the setting is Kafka's
 * ({@code linger.ms} aside: 5 ms in both). Fluent setters; read once by {@link Producer}.
 */
public final class ProducerConfig extends ClientConfig<ProducerConfig>
{
    /** acks=all, Kafka's -1. */
    public static final short ACKS_ALL = -1;

    short acks = ACKS_ALL;
    long lingerNs = 5_000_000L;
    int batchSize = 16_384;
    int maxRequestSize = 1_048_576;
    long bufferMemory = 33_554_432L;
    CompressionType compression = CompressionType.NONE;
    int retries = Integer.MAX_VALUE;
    long deliveryTimeoutNs = 120_000_000_000L;
    int maxInFlight = 5;
    boolean enableIdempotence = true;
    /** Whether the application set {@code enable.idempotence} itself: a conflict then throws instead of turning it off. */
    boolean idempotenceSet;
    ProducerTrace trace;

    public ProducerConfig()
    {
        super("ferrite-client");
    }

    /** {@code acks}: 0, 1 or -1 ({@link #ACKS_ALL}). */
    public ProducerConfig acks(final int acks)
    {
        if (acks != 0 && acks != 1 && acks != -1)
        {
            throw new IllegalArgumentException("acks must be 0, 1 or -1 (all), not " + acks);
        }
        this.acks = (short)acks;
        return this;
    }

    public ProducerConfig lingerMs(final long lingerMs)
    {
        this.lingerNs = lingerMs * 1_000_000L;
        return this;
    }

    public ProducerConfig batchSize(final int batchSize)
    {
        this.batchSize = batchSize;
        return this;
    }

    public ProducerConfig maxRequestSize(final int maxRequestSize)
    {
        this.maxRequestSize = maxRequestSize;
        return this;
    }

    /** {@code buffer.memory}: bounds the batches held (each {@code batch.size}); beyond it send answers BUFFER_FULL. */
    public ProducerConfig bufferMemory(final long bytes)
    {
        this.bufferMemory = bytes;
        return this;
    }

    public ProducerConfig compression(final CompressionType compression)
    {
        this.compression = compression;
        return this;
    }

    public ProducerConfig retries(final int retries)
    {
        this.retries = retries;
        return this;
    }

    public ProducerConfig deliveryTimeoutMs(final long ms)
    {
        this.deliveryTimeoutNs = ms * 1_000_000L;
        return this;
    }

    /** {@code enable.idempotence}: true by default, as kafka-clients (off, quietly, when acks or retries forbid it and it was not set). */
    public ProducerConfig enableIdempotence(final boolean enable)
    {
        this.enableIdempotence = enable;
        this.idempotenceSet = true;
        return this;
    }

    /** {@code max.in.flight.requests.per.connection}: 5 by default; at most 5 with idempotence. */
    public ProducerConfig maxInFlightRequestsPerConnection(final int requests)
    {
        if (requests < 1)
        {
            throw new IllegalArgumentException("max.in.flight.requests.per.connection must be at least 1, not " + requests);
        }
        this.maxInFlight = requests;
        return this;
    }

    /** A {@link ProducerTrace} told where each batch is (drained, written, answered); null, the default, for none. */
    public ProducerConfig trace(final ProducerTrace trace)
    {
        this.trace = trace;
        return this;
    }

    /**
     * Whether the producer is idempotent, by kafka-clients' rules: {@code enable.idempotence} (true unless
     * set false) is turned off by {@code retries=0} or {@code acks} other than all when it was not set, and a
     * {@link ConfigException} when it was; {@code max.in.flight.requests.per.connection} above 5 with
     * {@code enable.idempotence} true is a {@link ConfigException} either way (kafka-clients checks it
     * before it turns idempotence off).
     */
    boolean idempotent()
    {
        if (!enableIdempotence)
        {
            return false;
        }
        boolean off = false;
        if (retries == 0)
        {
            if (idempotenceSet)
            {
                throw new ConfigException("Must set retries to non-zero when using the idempotent producer.");
            }
            off = true;
        }
        if (acks != ACKS_ALL)
        {
            if (idempotenceSet)
            {
                throw new ConfigException(
                    "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence.");
            }
            off = true;
        }
        if (maxInFlight > 5)
        {
            throw new ConfigException("To use the idempotent producer, max.in.flight.requests.per.connection must be set " +
                "to at most 5. Current value is " + maxInFlight + ".");
        }
        return !off;
    }

    /** The transport's settings: a request holds one batch of {@code max.request.size} at most, with room for headers. */
    TransportSettings transport()
    {
        return transport(maxRequestSize + 64 * 1024, maxInFlight);
    }
}
