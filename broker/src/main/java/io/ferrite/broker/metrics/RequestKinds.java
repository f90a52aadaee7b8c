package io.ferrite.broker.metrics;

import io.ferrite.wire.message.ApiKeys;

/**
 * The kinds of request Kafka's {@code RequestMetrics} are kept per (its {@code request=} key): one per API, named by
 * the API's title, and for Fetch three, as Kafka 4.4 keeps them ({@code Request.updateRequestMetrics}): every fetch is
 * counted and timed both as {@code FetchConsumer} (replica id -1) or {@code FetchFollower} (a replica's fetch, replica
 * id 0 or more) and as {@code Fetch}. A kind is an int: the API key, {@link #FETCH_FOLLOWER} for a follower's fetch (so
 * Fetch's key means a consumer's fetch), {@link #FETCH_ALL} for {@code Fetch}: never recorded, the sum of the two,
 * worked out when it is read (the request path writes only the two). Kafka's {@code ErrorsPerSec} keeps fetch errors
 * under {@code request=Fetch} only ({@code RequestChannel.updateErrorMetrics} is per API): {@link #FETCH_ALL} there.
 */
public final class RequestKinds
{
    /** The kind of a follower's fetch: one past the highest API key. */
    public static final int FETCH_FOLLOWER = maxApiKey() + 1;
    /** Kafka's {@code request=Fetch}: every fetch (consumers' and followers'), summed when read. */
    public static final int FETCH_ALL = FETCH_FOLLOWER + 1;
    /** The kinds there are: {@code 0 .. COUNT - 1} (an int with no API and none of the two above has no name). */
    public static final int COUNT = FETCH_ALL + 1;

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
        if (kind == FETCH_ALL)
        {
            return "Fetch";
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
