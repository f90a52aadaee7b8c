package io.ferrite.broker.quota;

import io.ferrite.broker.Errors;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * AlterClientQuotas and DescribeClientQuotas as Kafka 4.4 answers them: the controller's checks of an alteration
 * ({@code ClientQuotaControlManager}: the entity's types and their combination, each key known for that combination,
 * each value finite, positive and whole where the key is an integer) and the broker's filter of a describe
 * ({@code ClientQuotasImage.describe}). Pure functions over an immutable map of the quotas; the caller publishes.
 */
public final class QuotaRules
{
    /** Kafka's {@code ClientQuotaFilterComponent} match types on the wire. */
    public static final byte MATCH_EXACT = 0;
    public static final byte MATCH_DEFAULT = 1;
    public static final byte MATCH_SPECIFIED = 2;

    private QuotaRules()
    {
    }

    /** One op of an alteration: a key set to a value, or removed. */
    public record Op(String key, double value, boolean remove)
    {
    }

    /** One entry of an AlterClientQuotas request: its entity as Kafka reads it (type to name, a later type replacing an earlier) and its ops. */
    public record Alteration(Map<String, String> entity, List<Op> ops)
    {
    }

    /** The answer for one entity. */
    public record Result(Map<String, String> entity, short errorCode, String errorMessage)
    {
    }

    /** The quotas after an alteration (the same map when nothing changed) and the answer per entity, in request order. */
    public record Outcome(Map<QuotaEntity, Map<String, Double>> quotas, List<Result> results)
    {
    }

    /** A filter component of a DescribeClientQuotas request. */
    public record Component(String entityType, byte matchType, String match)
    {
    }

    /** A DescribeClientQuotas request refused whole: its error and message. */
    public static final class Refused extends Exception
    {
        private static final long serialVersionUID = 1L;
        public final short errorCode;

        Refused(final short errorCode, final String message)
        {
            super(message, null, false, false);
            this.errorCode = errorCode;
        }
    }

    /**
     * Applies {@code alterations} to {@code quotas} as Kafka 4.4's controller does ({@code ClientQuotaControlManager},
     * read with javap): each entity checked alone and changed only when all its ops are valid (the first invalid one, in
     * the order of Kafka's HashMap of them, is the entity's error); a second entry for one entity — or a key twice in one
     * — is answered "Ignoring duplicate entity", a change made by its first entry standing. With {@code validateOnly}
     * the answers are the same and nothing changes.
     */
    public static Outcome alter(final Map<QuotaEntity, Map<String, Double>> quotas, final List<Alteration> alterations,
        final boolean validateOnly)
    {
        final Map<QuotaEntity, Map<String, Double>> next = new LinkedHashMap<>();
        quotas.forEach((entity, values) -> next.put(entity, new LinkedHashMap<>(values)));
        final Map<Map<String, String>, Result> results = new LinkedHashMap<>();
        boolean changed = false;
        for (final Alteration alteration : alterations)
        {
            final Map<String, String> entity = alteration.entity();
            final Map<String, Op> ops = new HashMap<>(); // Kafka's: a HashMap, whose order decides which invalid op is told
            for (final Op op : alteration.ops())
            {
                if (ops.containsKey(op.key()))
                {
                    results.put(entity, new Result(entity, Errors.INVALID_REQUEST, "Duplicate quota key " + op.key()
                        + " not updating quota for this entity " + kafkaString(entity)));
                }
                else
                {
                    ops.put(op.key(), op);
                }
            }
            if (results.containsKey(entity))
            {
                results.put(entity, new Result(entity, Errors.INVALID_REQUEST, "Ignoring duplicate entity " + kafkaString(entity)));
                continue;
            }
            changed |= alterEntity(next, entity, ops, results);
        }
        final List<Result> answers = new ArrayList<>(results.values());
        if (validateOnly || !changed)
        {
            return new Outcome(quotas, answers);
        }
        final Map<QuotaEntity, Map<String, Double>> frozen = new LinkedHashMap<>();
        next.forEach((entity, values) ->
        {
            if (!values.isEmpty())
            {
                frozen.put(entity, Collections.unmodifiableMap(values));
            }
        });
        return new Outcome(Collections.unmodifiableMap(frozen), answers);
    }

    /** One entity's ops, applied to {@code next} when all are valid; true when something changed. */
    private static boolean alterEntity(final Map<QuotaEntity, Map<String, Double>> next, final Map<String, String> entity,
        final Map<String, Op> ops, final Map<Map<String, String>, Result> results)
    {
        final String error = entityError(entity);
        if (error != null)
        {
            results.put(entity, new Result(entity, Errors.INVALID_REQUEST, error));
            return false;
        }
        final QuotaEntity key = new QuotaEntity(entity.containsKey(QuotaEntity.USER), entity.get(QuotaEntity.USER),
            entity.containsKey(QuotaEntity.CLIENT_ID), entity.get(QuotaEntity.CLIENT_ID), entity.containsKey(QuotaEntity.IP),
            entity.get(QuotaEntity.IP));
        for (final Op op : ops.values())
        {
            final String invalid = op.remove() ? null : valueError(key, op.key(), op.value());
            if (invalid != null)
            {
                results.put(entity, new Result(entity, Errors.INVALID_REQUEST, invalid));
                return false;
            }
        }
        final Map<String, Double> values = next.computeIfAbsent(key, k -> new LinkedHashMap<>());
        boolean changed = false;
        for (final Op op : ops.values())
        {
            if (op.remove())
            {
                changed |= values.remove(op.key()) != null;
            }
            else
            {
                final Double before = values.put(op.key(), op.value());
                changed |= before == null || before != op.value();
            }
        }
        results.put(entity, new Result(entity, Errors.NONE, null));
        return changed;
    }

    /** What is wrong with an entity's types, names and their combination, or null (Kafka's validateEntity, configKeysForEntityType). */
    private static String entityError(final Map<String, String> entity)
    {
        if (entity.isEmpty())
        {
            return "Invalid empty client quota entity";
        }
        for (final Map.Entry<String, String> e : entity.entrySet())
        {
            final String type = e.getKey();
            if (!QuotaEntity.USER.equals(type) && !QuotaEntity.CLIENT_ID.equals(type) && !QuotaEntity.IP.equals(type))
            {
                return "Unhandled client quota entity type: " + type;
            }
            if (e.getValue() != null && e.getValue().isEmpty())
            {
                return "Empty " + type + " not supported";
            }
        }
        if (entity.containsKey(QuotaEntity.IP))
        {
            if (entity.containsKey(QuotaEntity.USER) || entity.containsKey(QuotaEntity.CLIENT_ID))
            {
                return "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId";
            }
            final String ip = entity.get(QuotaEntity.IP);
            if (ip != null && !resolvable(ip))
            {
                return ip + " is not a valid IP or resolvable host.";
            }
        }
        return null;
    }

    private static boolean resolvable(final String host)
    {
        try
        {
            InetAddress.getByName(host);
            return true;
        }
        catch (final UnknownHostException ex)
        {
            return false;
        }
    }

    /** What is wrong with {@code value} for {@code key} on {@code entity}, or null. */
    private static String valueError(final QuotaEntity entity, final String key, final double value)
    {
        final QuotaKeys.Type type = QuotaKeys.type(entity, key);
        if (type == null)
        {
            return "Invalid configuration key " + key;
        }
        if (!Double.isFinite(value))
        {
            return "Quota " + key + " must be a finite number";
        }
        if (value <= 0)
        {
            return "Quota " + key + " must be greater than 0";
        }
        switch (type)
        {
            case DOUBLE:
                return null;
            case INT:
                if (value > Integer.MAX_VALUE)
                {
                    return "Proposed value for " + key + " is too large for an INT.";
                }
                return fractional(key, value);
            case LONG:
                if (value > Long.MAX_VALUE)
                {
                    return "Proposed value for " + key + " is too large for a LONG.";
                }
                return fractional(key, value);
            default:
                return "Unexpected config type " + type + " should be Long or Double";
        }
    }

    private static String fractional(final String key, final double value)
    {
        return Math.abs(value % 1.0) > 1e-6 ? key + " cannot be a fractional value." : null;
    }

    /** Kafka's {@code ClientQuotaEntity.toString()} of an entity as a request gave it. */
    private static String kafkaString(final Map<String, String> entity)
    {
        return "ClientQuotaEntity(entries=" + entity + ")";
    }

    /**
     * The quotas a DescribeClientQuotas filter matches, as Kafka's {@code ClientQuotasImage.describe}: an exact match names
     * the entity's part (a default match its default), a specified match wants the part named, and with {@code strict}
     * the entity has no other part.
     *
     * @throws Refused the filter's error (INVALID_REQUEST, UNSUPPORTED_VERSION) and Kafka's message
     */
    public static Map<QuotaEntity, Map<String, Double>> describe(final Map<QuotaEntity, Map<String, Double>> quotas,
        final List<Component> components, final boolean strict) throws Refused
    {
        final Map<String, String> exact = new HashMap<>();
        final Set<String> specified = new HashSet<>();
        for (final Component c : components)
        {
            if (c.entityType().isEmpty())
            {
                throw new Refused(Errors.INVALID_REQUEST, "Invalid empty entity type.");
            }
            if (exact.containsKey(c.entityType()) || specified.contains(c.entityType()))
            {
                throw new Refused(Errors.INVALID_REQUEST, "Entity type " + c.entityType() + " cannot appear more than once in the filter.");
            }
            if (!QuotaEntity.IP.equals(c.entityType()) && !QuotaEntity.USER.equals(c.entityType())
                && !QuotaEntity.CLIENT_ID.equals(c.entityType()))
            {
                throw new Refused(Errors.UNSUPPORTED_VERSION, "Unsupported entity type " + c.entityType());
            }
            switch (c.matchType())
            {
                case MATCH_EXACT:
                    if (c.match() == null)
                    {
                        throw new Refused(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.");
                    }
                    exact.put(c.entityType(), c.match());
                    break;
                case MATCH_DEFAULT:
                    if (c.match() != null)
                    {
                        throw new Refused(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
                    }
                    exact.put(c.entityType(), null);
                    break;
                case MATCH_SPECIFIED:
                    if (c.match() != null)
                    {
                        throw new Refused(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
                    }
                    specified.add(c.entityType());
                    break;
                default:
                    throw new Refused(Errors.UNSUPPORTED_VERSION, "Unknown match type " + c.matchType());
            }
        }
        final boolean ipFilter = exact.containsKey(QuotaEntity.IP) || specified.contains(QuotaEntity.IP);
        final boolean otherFilter = exact.containsKey(QuotaEntity.USER) || specified.contains(QuotaEntity.USER)
            || exact.containsKey(QuotaEntity.CLIENT_ID) || specified.contains(QuotaEntity.CLIENT_ID);
        if (ipFilter && otherFilter)
        {
            throw new Refused(Errors.INVALID_REQUEST, "Invalid entity filter component combination. IP filter component should not be "
                + "used with user or clientId filter component.");
        }
        final Map<QuotaEntity, Map<String, Double>> matched = new LinkedHashMap<>();
        quotas.forEach((entity, values) ->
        {
            if (matches(entity.entries(), exact, specified, strict))
            {
                matched.put(entity, values);
            }
        });
        return matched;
    }

    private static boolean matches(final Map<String, String> entity, final Map<String, String> exact, final Set<String> specified,
        final boolean strict)
    {
        if (strict && entity.size() != exact.size() + specified.size())
        {
            return false;
        }
        for (final Map.Entry<String, String> e : exact.entrySet())
        {
            if (!entity.containsKey(e.getKey()) || !Objects.equals(entity.get(e.getKey()), e.getValue()))
            {
                return false;
            }
        }
        for (final String type : specified)
        {
            if (!entity.containsKey(type) || entity.get(type) == null)
            {
                return false;
            }
        }
        return true;
    }
}
