package io.ferrite.broker.metrics;

import io.ferrite.wire.message.ApiKeys;

/**
 * The kinds of request Kafka's {@code RequestMetrics} are kept per (its {@code request=} key): one per API, named by
 * the API's title, except Fetch, which Kafka keeps as two — {@code FetchConsumer} (replica id -1) and
 * {@code FetchFollower} (a replica's fetch, replica id 0 or more) — and never as {@code Fetch}. A kind is an int: the
 * API key, {@link #FETCH_FOLLOWER} for a follower's fetch (so Fetch's key means a consumer's fetch).
 */
public final class RequestKinds
{
    /** The kind of a follower's fetch: one past the highest API key. */
    public static final int FETCH_FOLLOWER = maxApiKey() + 1;
    /** The kinds there are: {@code 0 .. COUNT - 1} (an int with no API and not {@link #FETCH_FOLLOWER} has no name). */
    public static final int COUNT = FETCH_FOLLOWER + 1;

    private RequestKinds()
    {
    }

    /** The kind of a request of {@code api}, {@code follower}: a Fetch from a replica. */
    public static int of(final ApiKeys api, final boolean follower)
    {
        return api == ApiKeys.FETCH && follower ? FETCH_FOLLOWER : api.id;
    }

    /** Kafka's {@code request=} name of {@code kind}, or null for an int that is no kind. */
    public static String name(final int kind)
    {
        if (kind == FETCH_FOLLOWER)
        {
            return "FetchFollower";
        }
        if (kind == ApiKeys.FETCH.id)
        {
            return "FetchConsumer";
        }
        final ApiKeys api = kind >= 0 ? ApiKeys.forId(kind) : null;
        return api == null ? null : api.title;
    }

    private static int maxApiKey()
    {
        int max = 0;
        for (final ApiKeys api : ApiKeys.values())
        {
            max = Math.max(max, api.id);
        }
        return max;
    }
}
