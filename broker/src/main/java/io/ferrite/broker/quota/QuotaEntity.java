package io.ferrite.broker.quota;

import java.util.HashMap;
import java.util.Map;

/**
 * What a client quota is set on, as Kafka's {@code ClientQuotaEntity} names it: some of a user, a client id and an IP
 * address, each by name or as the default ({@code kafka-configs.sh --entity-default}: a null name on the wire). Only
 * the combinations Kafka stores are made (user, client id, user and client id, ip: {@link QuotaRules}).
 *
 * @param hasUser whether the entity names a user; {@code user} null then means the default user
 * @param hasClientId whether it names a client id; {@code clientId} null then means the default client id
 * @param hasIp whether it names an IP address; {@code ip} null then means the default IP
 */
public record QuotaEntity(boolean hasUser, String user, boolean hasClientId, String clientId, boolean hasIp, String ip)
{
    /** Kafka's entity type names ({@code ClientQuotaEntity.USER}, {@code CLIENT_ID}, {@code IP}). */
    public static final String USER = "user";
    public static final String CLIENT_ID = "client-id";
    public static final String IP = "ip";

    public static QuotaEntity user(final String name)
    {
        return new QuotaEntity(true, name, false, null, false, null);
    }

    public static QuotaEntity clientId(final String name)
    {
        return new QuotaEntity(false, null, true, name, false, null);
    }

    public static QuotaEntity userAndClientId(final String user, final String clientId)
    {
        return new QuotaEntity(true, user, true, clientId, false, null);
    }

    public static QuotaEntity ip(final String name)
    {
        return new QuotaEntity(false, null, false, null, true, name);
    }

    /** Its parts as Kafka's {@code ClientQuotaEntity.entries()} holds them: type to name (null: the default). */
    public Map<String, String> entries()
    {
        final Map<String, String> entries = new HashMap<>(4); // a HashMap, as Kafka's: its toString is in Kafka's messages
        if (hasUser)
        {
            entries.put(USER, user);
        }
        if (hasClientId)
        {
            entries.put(CLIENT_ID, clientId);
        }
        if (hasIp)
        {
            entries.put(IP, ip);
        }
        return entries;
    }

    /** Kafka's {@code ClientQuotaEntity.toString()}, as its error messages quote an entity. */
    public String kafkaString()
    {
        return "ClientQuotaEntity(entries=" + entries() + ")";
    }
}
