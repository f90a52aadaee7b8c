package io.ferrite.broker.topic;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a Kafka 4.4 KRaft metadata log ({@code __cluster_metadata}) says about the topics, built by replaying its
 * records in order ({@link #apply}); read once, at the first start on a Kafka log directory ({@link KafkaImport}).
 *
 * <p>A metadata record is the value of a Kafka record (no key): an unsigned varint frame version (1), an unsigned
 * varint api key, an unsigned varint record version, then the record in its schema ({@code common/metadata/*.json}
 * of {@code org.apache.kafka:kafka-metadata:4.4.0}, all flexible: compact strings and arrays, tagged fields at the
 * end). Only the records below are read, each by its own few fields; every other record type is counted by api key
 * (a later version of a read type too), never a failure. A small reader per type rather than the wire module's
 * generator: a dozen record types of a handful of fields each, read once at a start, and nothing of them on a request path.
 */
final class KafkaMetadataImage
{
    static final int TOPIC = 2;
    static final int PARTITION = 3;
    static final int CONFIG = 4;
    static final int PARTITION_CHANGE = 5;
    static final int REMOVE_TOPIC = 9;
    static final int DELEGATION_TOKEN = 10;
    static final int USER_SCRAM_CREDENTIAL = 11;
    static final int FEATURE_LEVEL = 12;
    static final int CLIENT_QUOTA = 14;
    static final int ACCESS_CONTROL_ENTRY = 18;
    static final int REMOVE_ACCESS_CONTROL_ENTRY = 19;
    static final int REMOVE_USER_SCRAM_CREDENTIAL = 22;
    static final int REMOVE_DELEGATION_TOKEN = 26;

    /** ConfigRecord's resource types (Kafka's {@code ConfigResource.Type} ids). */
    static final byte RESOURCE_TOPIC = 2;
    static final byte RESOURCE_BROKER = 4;

    /** A partition as the image last had it. */
    static final class PartitionState
    {
        int leader = -1;
        int[] replicas = new int[0];
    }

    /** A live topic: its name and partitions (by index). */
    static final class TopicState
    {
        final String name;
        final long[] id;
        final Map<Integer, PartitionState> partitions = new TreeMap<>();

        TopicState(final String name, final long[] id)
        {
            this.name = name;
            this.id = id;
        }
    }

    /** The live topics by id (as text), in creation order. */
    final Map<String, TopicState> topics = new LinkedHashMap<>();
    /** Each topic's config overrides, by topic name (Kafka keys topic configs by name). */
    final Map<String, Map<String, String>> topicConfigs = new HashMap<>();
    /** Other configs (broker, client metrics, group ...): "type/resource" to names. */
    final Map<String, Set<String>> otherConfigs = new TreeMap<>();
    final Set<String> acls = new HashSet<>();
    final Set<String> scramCredentials = new TreeSet<>();
    final Set<String> quotas = new TreeSet<>();
    final Set<String> delegationTokens = new HashSet<>();
    final Map<String, Short> featureLevels = new TreeMap<>();
    /** Records of types not read here, by api key. */
    final Map<Integer, Integer> skipped = new TreeMap<>();
    /** Records that could not be parsed (each logged by the reader). */
    int unreadable;

    /** Replays one metadata record (a record's value). @throws IllegalArgumentException when it cannot be parsed */
    void apply(final ByteBuffer value)
    {
        final Cursor in = new Cursor(value);
        try
        {
            final int frame = in.uvarint();
            final int apiKey = in.uvarint();
            final int version = in.uvarint();
            if (frame != 1)
            {
                throw new IllegalArgumentException("frame version " + frame + " (1 expected)");
            }
            if (!read(apiKey, version, in))
            {
                skipped.merge(apiKey, 1, Integer::sum);
            }
        }
        catch (final BufferUnderflowException | IndexOutOfBoundsException | NegativeArraySizeException ex)
        {
            throw new IllegalArgumentException("truncated record", ex);
        }
    }

    /** Reads a record of a type and version known here: false when it is not one. */
    private boolean read(final int apiKey, final int version, final Cursor in)
    {
        switch (apiKey)
        {
            case TOPIC:
                if (version != 0)
                {
                    return false;
                }
                final String name = in.string();
                final long[] id = in.uuid();
                topics.put(TopicIds.encode(id[0], id[1]), new TopicState(name, id));
                return true;
            case PARTITION:
                return version <= 2 && partition(in);
            case PARTITION_CHANGE:
                return version <= 2 && partitionChange(in);
            case CONFIG:
                return version == 0 && config(in);
            case REMOVE_TOPIC:
                if (version != 0)
                {
                    return false;
                }
                final long[] removed = in.uuid();
                final TopicState gone = topics.remove(TopicIds.encode(removed[0], removed[1]));
                if (gone != null)
                {
                    topicConfigs.remove(gone.name); // Kafka's controller drops a deleted topic's configs with it
                }
                return true;
            case ACCESS_CONTROL_ENTRY:
            case REMOVE_ACCESS_CONTROL_ENTRY:
                if (version != 0)
                {
                    return false;
                }
                final long[] acl = in.uuid();
                if (apiKey == ACCESS_CONTROL_ENTRY)
                {
                    acls.add(TopicIds.encode(acl[0], acl[1]));
                }
                else
                {
                    acls.remove(TopicIds.encode(acl[0], acl[1]));
                }
                return true;
            case USER_SCRAM_CREDENTIAL:
            case REMOVE_USER_SCRAM_CREDENTIAL:
                if (version != 0)
                {
                    return false;
                }
                final String user = in.string() + " (" + scramMechanism(in.int8()) + ")";
                if (apiKey == USER_SCRAM_CREDENTIAL)
                {
                    scramCredentials.add(user);
                }
                else
                {
                    scramCredentials.remove(user);
                }
                return true;
            case CLIENT_QUOTA:
                return version == 0 && quota(in);
            case DELEGATION_TOKEN:
            case REMOVE_DELEGATION_TOKEN:
                if (version != 0)
                {
                    return false;
                }
                if (apiKey == DELEGATION_TOKEN)
                {
                    in.string(); // owner
                    in.string(); // requester
                    final int renewers = in.uvarint() - 1;
                    for (int i = 0; i < renewers; i++)
                    {
                        in.string();
                    }
                    in.skip(3 * Long.BYTES); // issue, max and expiration timestamps
                }
                final String token = in.string();
                if (apiKey == DELEGATION_TOKEN)
                {
                    delegationTokens.add(token);
                }
                else
                {
                    delegationTokens.remove(token);
                }
                return true;
            case FEATURE_LEVEL:
                if (version != 0)
                {
                    return false;
                }
                featureLevels.put(in.string(), in.int16());
                return true;
            default:
                return false;
        }
    }

    private boolean partition(final Cursor in)
    {
        final int index = in.int32();
        final TopicState topic = topics.get(in.uuidText());
        final int[] replicas = in.int32Array();
        in.int32Array(); // isr
        in.int32Array(); // removing
        in.int32Array(); // adding
        final int leader = in.int32();
        if (topic != null)
        {
            final PartitionState p = topic.partitions.computeIfAbsent(index, i -> new PartitionState());
            p.replicas = replicas;
            p.leader = leader;
        }
        return true;
    }

    /** PartitionChangeRecord: after the partition and topic id, only tagged fields; Leader is tag 1, Replicas tag 2. */
    private boolean partitionChange(final Cursor in)
    {
        final int index = in.int32();
        final TopicState topic = topics.get(in.uuidText());
        final PartitionState p = topic == null ? null : topic.partitions.get(index);
        final int tags = in.uvarint();
        for (int i = 0; i < tags; i++)
        {
            final int tag = in.uvarint();
            final int size = in.uvarint();
            final int end = in.position() + size;
            if (p != null && tag == 1)
            {
                final int leader = in.int32();
                if (leader != -2) // -2: unchanged
                {
                    p.leader = leader;
                }
            }
            else if (p != null && tag == 2)
            {
                final int[] replicas = in.nullableInt32Array();
                if (replicas != null)
                {
                    p.replicas = replicas;
                }
            }
            in.position(end);
        }
        return true;
    }

    private boolean config(final Cursor in)
    {
        final byte type = in.int8();
        final String resource = in.string();
        final String name = in.string();
        final String value = in.nullableString();
        if (type == RESOURCE_TOPIC)
        {
            final Map<String, String> configs = topicConfigs.computeIfAbsent(resource, r -> new TreeMap<>());
            if (value == null)
            {
                configs.remove(name);
            }
            else
            {
                configs.put(name, value);
            }
        }
        else
        {
            final String key = resourceType(type) + " " + (resource.isEmpty() ? "(default)" : resource);
            final Set<String> names = otherConfigs.computeIfAbsent(key, k -> new TreeSet<>());
            if (value == null)
            {
                names.remove(name);
                if (names.isEmpty())
                {
                    otherConfigs.remove(key);
                }
            }
            else
            {
                names.add(name);
            }
        }
        return true;
    }

    private boolean quota(final Cursor in)
    {
        final int entities = in.uvarint() - 1;
        final StringBuilder entity = new StringBuilder();
        for (int i = 0; i < entities; i++)
        {
            final String type = in.string();
            final String name = in.nullableString();
            in.skipTags();
            entity.append(i == 0 ? "" : ",").append(type).append('=').append(name == null ? "(default)" : name);
        }
        final String key = entity + " " + in.string();
        in.float64();
        if (in.int8() != 0) // Remove
        {
            quotas.remove(key);
        }
        else
        {
            quotas.add(key);
        }
        return true;
    }

    static String resourceType(final byte type)
    {
        switch (type)
        {
            case RESOURCE_BROKER:
                return "broker";
            case 8:
                return "broker logger";
            case 16:
                return "client metrics";
            case 32:
                return "group";
            default:
                return "resource type " + type;
        }
    }

    private static String scramMechanism(final byte type)
    {
        return type == 1 ? "SCRAM-SHA-256" : type == 2 ? "SCRAM-SHA-512" : "mechanism " + type;
    }

    /** The flexible-version primitives these records use, over one record's bytes. */
    static final class Cursor
    {
        private final ByteBuffer b;

        Cursor(final ByteBuffer value)
        {
            this.b = value.slice();
        }

        int position()
        {
            return b.position();
        }

        void position(final int position)
        {
            b.position(position);
        }

        int uvarint()
        {
            int value = 0;
            for (int shift = 0; shift < 35; shift += 7)
            {
                final int x = b.get();
                value |= (x & 0x7f) << shift;
                if ((x & 0x80) == 0)
                {
                    return value;
                }
            }
            throw new IllegalArgumentException("varint longer than 5 bytes");
        }

        byte int8()
        {
            return b.get();
        }

        short int16()
        {
            return b.getShort();
        }

        int int32()
        {
            return b.getInt();
        }

        double float64()
        {
            return b.getDouble();
        }

        long[] uuid()
        {
            return new long[] {b.getLong(), b.getLong()};
        }

        String uuidText()
        {
            final long[] id = uuid();
            return TopicIds.encode(id[0], id[1]);
        }

        String nullableString()
        {
            final int length = uvarint() - 1;
            if (length < 0)
            {
                return null;
            }
            if (length > b.remaining()) // checked before the array: a bad length is a record refused, not a 2 GB allocation
            {
                throw new IllegalArgumentException("a string of " + length + " bytes with " + b.remaining() + " left");
            }
            final byte[] bytes = new byte[length];
            b.get(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        }

        String string()
        {
            final String s = nullableString();
            if (s == null)
            {
                throw new IllegalArgumentException("null in a non-nullable string");
            }
            return s;
        }

        int[] nullableInt32Array()
        {
            final int count = uvarint() - 1;
            if (count < 0)
            {
                return null;
            }
            if (count > b.remaining() / 4)
            {
                throw new IllegalArgumentException("array of " + count + " int32 in " + b.remaining() + " bytes");
            }
            final int[] values = new int[count];
            for (int i = 0; i < count; i++)
            {
                values[i] = b.getInt();
            }
            return values;
        }

        int[] int32Array()
        {
            final int[] values = nullableInt32Array();
            return values == null ? new int[0] : values;
        }

        void skip(final int bytes)
        {
            b.position(b.position() + bytes);
        }

        void skipTags()
        {
            final int tags = uvarint();
            for (int i = 0; i < tags; i++)
            {
                uvarint();
                b.position(b.position() + uvarint());
            }
        }
    }
}
