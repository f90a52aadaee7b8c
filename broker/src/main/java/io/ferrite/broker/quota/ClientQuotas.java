package io.ferrite.broker.quota;

import io.ferrite.broker.net.Connection;
import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * The broker's client quotas (Kafka's, by user and client id): the quotas set with AlterClientQuotas, kept in
 * {@link QuotasFile}, and the enforcement of {@code producer_byte_rate} and {@code consumer_byte_rate} as Kafka's
 * {@code ClientQuotaManager} does it — a {@link ByteRate} per quota entity ({@link QuotaLevels}), the bytes of each
 * produce request recorded when it is answered and those of each consumer's fetch response before it is sent, and
 * the throttle time answered in the response's {@code throttle_time_ms} and kept by muting the connection
 * ({@code net.ThrottledConnections}). {@code request_percentage}, {@code controller_mutation_rate} and an IP's
 * {@code connection_creation_rate} are stored and described as Kafka does, not enforced.
 *
 * <p>Threads: the quotas are an immutable {@link Snapshot} behind a volatile reference; one writer at a time — the
 * admin agent running an AlterClientQuotas — replaces it after the file holds it. The network threads read it once a
 * produce or fetch: with no quota of its key set that is all they do (one branch, nothing allocated, no lock). With
 * one set, a connection's quota is resolved once and cached on the connection ({@link ConnectionQuota}) until the
 * snapshot, its principal or its client id changes; recording then writes the thread's own samples (no lock, nothing
 * allocated).
 */
public final class ClientQuotas
{
    /** Rates nobody recorded to for this long are dropped (Kafka: a sensor inactive for an hour expires). */
    private static final long IDLE_RATE_MS = 3_600_000;

    /** The quotas and what each byte-rate key needs to enforce them. Immutable. */
    public static final class Snapshot
    {
        static final Snapshot EMPTY = new Snapshot(Map.of());

        final Map<QuotaEntity, Map<String, Double>> quotas;
        final QuotaLevels produce;
        final QuotaLevels fetch;

        Snapshot(final Map<QuotaEntity, Map<String, Double>> quotas)
        {
            this.quotas = quotas;
            this.produce = QuotaLevels.of(quotas, QuotaKeys.PRODUCER_BYTE_RATE);
            this.fetch = QuotaLevels.of(quotas, QuotaKeys.CONSUMER_BYTE_RATE);
        }
    }

    private final QuotaRates produceRates;
    private final QuotaRates fetchRates;
    private volatile Snapshot snapshot = Snapshot.EMPTY;
    /** Null until loaded (then nothing is written: a broker that has not read its file must not replace it). */
    private volatile Path file;

    /** @param networkThreads the broker's network threads: each records into samples of its own */
    public ClientQuotas(final int networkThreads)
    {
        this.produceRates = new QuotaRates(networkThreads, IDLE_RATE_MS);
        this.fetchRates = new QuotaRates(networkThreads, IDLE_RATE_MS);
    }

    /** The client quotas' file of a broker whose first log directory is {@code dir}. */
    public static Path fileIn(final Path dir)
    {
        return dir.resolve(QuotasFile.FILE);
    }

    /** Reads {@code dir}'s quotas' file, if there is one. */
    public void load(final Path dir) throws IOException
    {
        final Path f = fileIn(dir);
        snapshot = new Snapshot(QuotasFile.read(f));
        file = f;
    }

    /** Every quota now (immutable), entity to key to value. */
    public Map<QuotaEntity, Map<String, Double>> quotas()
    {
        return snapshot.quotas;
    }

    /**
     * The single writer's (the admin agent's): writes {@code next} to the file, publishes it, then fsyncs the directory.
     * The answer to the client waits for all of it.
     *
     * @throws NotDurableException when the directory fsync failed: {@code next} is published and in the file, maybe not durably
     * @throws IOException when the file could not be replaced: nothing changed
     */
    public void replace(final Map<QuotaEntity, Map<String, Double>> next) throws IOException
    {
        final Path f = file;
        if (f == null)
        {
            throw new IOException("the client quotas were not loaded");
        }
        QuotasFile.writeContent(f, next); // throws: the old file stands, nothing changed
        snapshot = new Snapshot(next);
        try
        {
            DurableFile.fsyncDirectory(f.getParent());
        }
        catch (final IOException ex)
        {
            throw new NotDurableException(ex);
        }
    }

    /**
     * Records the produce request being answered on network thread {@code thread} (its size: Kafka's
     * {@code request.sizeInBytes}) and returns its throttle time: 0 when no {@code producer_byte_rate} applies or the
     * rate is within it.
     */
    public int produced(final Connection connection, final int thread)
    {
        final Snapshot s = snapshot;
        if (!s.produce.any())
        {
            return 0;
        }
        final ConnectionQuota q = resolved(connection, s);
        return q.produceRate == null ? 0 :
            q.produceRate.record(thread, connection.requestBytes(), System.currentTimeMillis(), q.produceBound, true);
    }

    /**
     * The most a consumer's fetch may return in one response, Kafka's {@code maxValueInQuotaWindow}: the bytes its
     * {@code consumer_byte_rate} allows over {@code SAMPLES - 1} windows (a larger response would always be throttled),
     * or {@link #NO_LIMIT} when none applies.
     */
    public long fetchLimit(final Connection connection)
    {
        final Snapshot s = snapshot;
        if (!s.fetch.any())
        {
            return NO_LIMIT;
        }
        final ConnectionQuota q = resolved(connection, s);
        if (q.fetchRate == null)
        {
            return NO_LIMIT;
        }
        return (long)Math.min(Long.MAX_VALUE - 1, q.fetchBound * (ByteRate.SAMPLES - 1) * (ByteRate.WINDOW_MS / 1000));
    }

    /** {@link #fetchLimit}: no consumer quota applies. */
    public static final long NO_LIMIT = Long.MAX_VALUE;

    /**
     * A consumer's fetch response of {@code responseBytes} is about to be sent: returns its throttle time, 0 when no
     * {@code consumer_byte_rate} applies or the rate with it is within it (then it is recorded). Throttled, it is taken
     * back and the caller answers an empty response, as Kafka does.
     */
    public int fetching(final Connection connection, final int thread, final long responseBytes, final long nowMs)
    {
        final Snapshot s = snapshot;
        if (!s.fetch.any())
        {
            return 0;
        }
        final ConnectionQuota q = resolved(connection, s);
        if (q.fetchRate == null)
        {
            return 0;
        }
        final int throttleMs = q.fetchRate.record(thread, responseBytes, nowMs, q.fetchBound, true);
        if (throttleMs > 0)
        {
            q.fetchRate.record(thread, -responseBytes, nowMs, q.fetchBound, false); // Kafka's unrecordQuotaSensor
        }
        return throttleMs;
    }

    /** Adds {@code bytes} to a fetch already recorded by {@link #fetching} (its response came out larger than counted). */
    public void fetchedMore(final Connection connection, final int thread, final long bytes, final long nowMs)
    {
        final Object state = connection.quotaState();
        if (bytes != 0 && state instanceof ConnectionQuota q && q.fetchRate != null)
        {
            q.fetchRate.record(thread, bytes, nowMs, q.fetchBound, false);
        }
    }

    /** The connection's cached resolution, made again when the quotas, its principal or its client id changed. */
    private ConnectionQuota resolved(final Connection connection, final Snapshot s)
    {
        final Object state = connection.quotaState();
        if (state instanceof ConnectionQuota cached && cached.matches(s, connection))
        {
            return cached;
        }
        final ConnectionQuota q = new ConnectionQuota(s, connection);
        final String user = user(connection.principal());
        final String clientId = q.clientId();
        final QuotaLevels.Tags produceTags = s.produce.any() ? s.produce.tags(user, clientId) : null;
        final Double produceBound = produceTags == null ? null : s.produce.bound(produceTags);
        if (produceBound != null)
        {
            q.produceRate = produceRates.rate(produceTags);
            q.produceBound = produceBound;
        }
        final QuotaLevels.Tags fetchTags = s.fetch.any() ? s.fetch.tags(user, clientId) : null;
        final Double fetchBound = fetchTags == null ? null : s.fetch.bound(fetchTags);
        if (fetchBound != null)
        {
            q.fetchRate = fetchRates.rate(fetchTags);
            q.fetchBound = fetchBound;
        }
        connection.quotaState(q);
        return q;
    }

    /** The user a quota names for {@code principal} ({@code User:alice}): Kafka's {@code KafkaPrincipal.getName()}. */
    static String user(final String principal)
    {
        final int colon = principal.indexOf(':');
        return colon < 0 ? principal : principal.substring(colon + 1);
    }

    /** The file was replaced and its quotas are in effect, but its directory could not be fsynced: a crash may undo the change. */
    public static final class NotDurableException extends IOException
    {
        private static final long serialVersionUID = 1L;

        NotDurableException(final IOException cause)
        {
            super("the client quotas' file was replaced but its directory could not be fsynced: " + cause, cause);
        }
    }
}
