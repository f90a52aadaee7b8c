package io.ferrite.broker.quota;

import java.util.HashMap;
import java.util.Map;

/**
 * The quotas of one key ({@code producer_byte_rate} or {@code consumer_byte_rate}) and which client a quota applies to,
 * as Kafka 4.4's default quota callback decides it (each of Kafka's quota managers, one per key, has its own): the
 * most specific of eight levels — user and client id, user and default client id, user, default user and client id,
 * both defaults, default user, client id, default client id — and the set of clients that share one rate (Kafka's
 * metric tags): a quota found on a user alone is shared by all that user's client ids; one found on a client id alone,
 * by every user of it. Immutable.
 */
final class QuotaLevels
{
    private static final int CLIENT_ID_LEVELS = 1;
    private static final int USER_LEVELS = 2;
    private static final int USER_CLIENT_ID_LEVELS = 4;
    static final QuotaLevels NONE = new QuotaLevels(Map.of());

    /** The bound per entity that sets this key (user and client-id entities only: an IP's keys are others). */
    private final Map<QuotaEntity, Double> bounds;
    /** Kafka's {@code quotaTypesEnabled}: which kinds of entity set this key. */
    private final int kinds;

    private QuotaLevels(final Map<QuotaEntity, Double> bounds)
    {
        this.bounds = bounds;
        int k = 0;
        for (final QuotaEntity e : bounds.keySet())
        {
            k |= e.hasUser() && e.hasClientId() ? USER_CLIENT_ID_LEVELS : e.hasUser() ? USER_LEVELS : CLIENT_ID_LEVELS;
        }
        this.kinds = k;
    }

    static QuotaLevels of(final Map<QuotaEntity, Map<String, Double>> quotas, final String key)
    {
        final Map<QuotaEntity, Double> bounds = new HashMap<>();
        quotas.forEach((entity, values) ->
        {
            final Double value = values.get(key);
            if (value != null && !entity.hasIp())
            {
                bounds.put(entity, value);
            }
        });
        return bounds.isEmpty() ? NONE : new QuotaLevels(bounds);
    }

    /** Whether any quota of this key is set: without one, nothing is recorded (Kafka's {@code quotasEnabled}). */
    boolean any()
    {
        return kinds != 0;
    }

    /** Who shares a rate: Kafka's metric tags, "" for a part not in them. */
    record Tags(String user, String clientId)
    {
    }

    /** The tags of {@code user}'s requests with {@code clientId}: Kafka's {@code quotaMetricTags}. */
    Tags tags(final String user, final String clientId)
    {
        switch (kinds)
        {
            case 0:
            case CLIENT_ID_LEVELS:
                return new Tags("", clientId);
            case USER_LEVELS:
                return new Tags(user, "");
            case USER_CLIENT_ID_LEVELS:
                return new Tags(user, clientId);
            default:
                break;
        }
        // several kinds: the first level that holds a quota decides; Kafka checks them in this order
        if (bounds.containsKey(QuotaEntity.userAndClientId(user, clientId)) || bounds.containsKey(QuotaEntity.userAndClientId(user, null)))
        {
            return new Tags(user, clientId);
        }
        if (bounds.containsKey(QuotaEntity.user(user)))
        {
            return new Tags(user, "");
        }
        if (bounds.containsKey(QuotaEntity.userAndClientId(null, clientId)) || bounds.containsKey(QuotaEntity.userAndClientId(null, null)))
        {
            return new Tags(user, clientId);
        }
        if (bounds.containsKey(QuotaEntity.user(null)))
        {
            return new Tags(user, "");
        }
        return new Tags("", clientId);
    }

    /** The bound of the rate of {@code tags}, or null: none (Kafka's {@code quotaLimit}). */
    Double bound(final Tags tags)
    {
        final boolean user = !tags.user().isEmpty();
        final boolean client = !tags.clientId().isEmpty();
        if (user && client)
        {
            return first(QuotaEntity.userAndClientId(tags.user(), tags.clientId()), QuotaEntity.userAndClientId(tags.user(), null),
                QuotaEntity.userAndClientId(null, tags.clientId()), QuotaEntity.userAndClientId(null, null));
        }
        if (user)
        {
            return first(QuotaEntity.user(tags.user()), QuotaEntity.user(null));
        }
        if (client)
        {
            return first(QuotaEntity.clientId(tags.clientId()), QuotaEntity.clientId(null));
        }
        return null;
    }

    private Double first(final QuotaEntity... levels)
    {
        for (final QuotaEntity e : levels)
        {
            final Double bound = bounds.get(e);
            if (bound != null)
            {
                return bound;
            }
        }
        return null;
    }
}
