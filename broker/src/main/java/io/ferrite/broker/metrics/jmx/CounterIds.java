package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.metrics.CounterTypes;
import org.agrona.concurrent.status.CountersReader;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One pass over the counters' metadata: which counters (their ids, one per network thread) hold each figure, found by
 * type id and key as {@link CounterTypes} lays them out, never by a label (except to tell apart topics whose names are
 * longer than a key holds). Values are read later, at each query, with {@link #sum}.
 */
final class CounterIds
{
    /** The topic name's room in a key: what {@code BrokerCounters} cuts a longer name to. */
    private static final int KEY_NAME_ROOM = CountersReader.MAX_KEY_LENGTH - 8;

    /** Type id and the key's int at 4 (an API key, an error code, 0) -> the counters' ids. */
    private final Map<Long, List<Integer>> byCode = new HashMap<>();
    /** Topic type id and the key's name -> the counters' ids and labels. */
    private final Map<String, List<Object[]>> byTopic = new HashMap<>();

    private CounterIds()
    {
    }

    static CounterIds read(final CountersReader reader)
    {
        final CounterIds ids = new CounterIds();
        reader.forEach((counterId, typeId, key, label) ->
        {
            if (typeId == CounterTypes.TOPIC_RECORDS_IN || typeId == CounterTypes.TOPIC_BYTES_IN
                || typeId == CounterTypes.TOPIC_BYTES_OUT)
            {
                final int length = key.getInt(4);
                final String name = key.getStringWithoutLengthUtf8(8, length);
                ids.byTopic.computeIfAbsent(typeId + " " + name, k -> new ArrayList<>()).add(new Object[] {counterId, label});
            }
            else
            {
                ids.byCode.computeIfAbsent(codeKey(typeId, key.getInt(4)), k -> new ArrayList<>()).add(counterId);
            }
        });
        return ids;
    }

    private static long codeKey(final int typeId, final int code)
    {
        return ((long)typeId << 32) | (code & 0xFFFF_FFFFL);
    }

    /** The counters of type {@code typeId} whose key has {@code code} at 4 (every network thread's). */
    int[] of(final int typeId, final int code)
    {
        final List<Integer> found = byCode.getOrDefault(codeKey(typeId, code), List.of());
        return found.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The counters of topic {@code topic} of type {@code typeId}; none if the topic has none (a full counters file). */
    int[] ofTopic(final int typeId, final String topic)
    {
        final byte[] name = topic.getBytes(StandardCharsets.UTF_8);
        final boolean cut = name.length > KEY_NAME_ROOM;
        final String keyName = cut ? new String(name, 0, KEY_NAME_ROOM, StandardCharsets.UTF_8) : topic;
        final List<Object[]> found = byTopic.getOrDefault(typeId + " " + keyName, List.of());
        // a name longer than the key's room: the label has it whole (two names may share their first 104 bytes)
        final String inLabel = " topic=" + topic + " net=";
        return found.stream().filter(f -> !cut || ((String)f[1]).contains(inLabel)).mapToInt(f -> (Integer)f[0]).toArray();
    }

    /**
     * The sum of counters {@code ids} of type {@code typeId} now; a counter freed since the ids were read (its topic
     * deleted) or reallocated to another figure counts nothing.
     */
    static long sum(final CountersReader reader, final int[] ids, final int typeId)
    {
        long sum = 0;
        for (final int id : ids)
        {
            if (reader.getCounterState(id) == CountersReader.RECORD_ALLOCATED && reader.getCounterTypeId(id) == typeId)
            {
                sum += reader.getCounterValue(id);
            }
        }
        return sum;
    }
}
