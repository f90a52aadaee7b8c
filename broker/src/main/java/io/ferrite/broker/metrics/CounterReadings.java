package io.ferrite.broker.metrics;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The counters read by their type id and key ({@link CounterTypes}), not by their labels: what the bridges to other
 * metrics systems read (the Prometheus endpoint at each scrape; the JMX MBeans find their counters' ids with
 * {@link #ids} and read them at each query with {@link #sum}). A reading is one counter's value at that moment;
 * {@link #summed} adds up the network threads' counters of one figure, as {@code ferrite-stat} shows them by default.
 * Reading allocates (a list, strings): it runs on the reader's thread, never on a request path.
 */
public final class CounterReadings
{
    /** Broker-wide: the figure summed over the network threads. */
    public static final int ALL_THREADS = -1;

    /**
     * One counter's figure: its type id, its network thread ({@link #ALL_THREADS} once summed), its API key, error
     * code or group state ({@link CounterTypes#REQUESTS}, {@link CounterTypes#API_ERRORS}, {@link CounterTypes#ERROR_CODES},
     * {@link CounterTypes#GROUPS}; both
     * for {@link CounterTypes#REQUEST_ERRORS}, see {@link CounterTypes#requestError}; 0 for the others) and its topic
     * (the per-topic types; null for the others).
     */
    public record Figure(int typeId, int thread, int code, String topic)
    {
        Figure summed()
        {
            return new Figure(typeId, ALL_THREADS, code, topic);
        }
    }

    /** A consumer group's lag on a partition ({@link CounterTypes#CONSUMER_LAG}). */
    public record Lag(String group, String topic, int partition, long value)
    {
    }

    private CounterReadings()
    {
    }

    /** Every consumer group's lag now, in the order of their counters' ids. */
    public static List<Lag> lags(final CountersReader reader)
    {
        final List<Lag> lags = new ArrayList<>();
        reader.forEach((id, typeId, key, label) ->
        {
            final String group = typeId == CounterTypes.CONSUMER_LAG ? LagCounters.groupOf(label) : null;
            if (group != null)
            {
                lags.add(new Lag(group, LagCounters.topicOf(label), key.getInt(4), reader.getCounterValue(id)));
            }
        });
        return lags;
    }

    /** Every allocated counter's figure and value now, in the order of their ids. */
    public static Map<Figure, Long> perThread(final CountersReader reader)
    {
        final Map<Figure, Long> values = new LinkedHashMap<>();
        reader.forEach((id, typeId, key, label) ->
            values.merge(figure(typeId, key, label), reader.getCounterValue(id), Long::sum));
        return values;
    }

    /** The figures summed over the network threads (each figure's thread is {@link #ALL_THREADS}). */
    public static Map<Figure, Long> summed(final CountersReader reader)
    {
        final Map<Figure, Long> sums = new LinkedHashMap<>();
        perThread(reader).forEach((figure, value) -> sums.merge(figure.summed(), value, Long::sum));
        return sums;
    }

    /**
     * Which counters hold each figure now: the figure (summed: its thread is {@link #ALL_THREADS}) -> the ids of its
     * counters, one per network thread. Their values are read later, at each query, with {@link #sum}.
     */
    public static Map<Figure, int[]> ids(final CountersReader reader)
    {
        final Map<Figure, int[]> ids = new HashMap<>();
        reader.forEach((id, typeId, key, label) -> ids.merge(figure(typeId, key, label).summed(), new int[] {id},
            (a, b) ->
            {
                final int[] both = Arrays.copyOf(a, a.length + b.length);
                System.arraycopy(b, 0, both, a.length, b.length);
                return both;
            }));
        return ids;
    }

    /**
     * The sum of counters {@code ids} of type {@code typeId} now; a counter freed since the ids were found (its topic
     * deleted) or reallocated to another figure counts nothing.
     */
    public static long sum(final CountersReader reader, final int[] ids, final int typeId)
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

    /** Kafka's name of an error code counted one by one, or {@code "OTHER"} ({@link CounterTypes#OTHER_CODE}). */
    public static String errorName(final int code)
    {
        for (int i = 0; i < CounterTypes.COUNTED_CODES.length; i++)
        {
            if (CounterTypes.COUNTED_CODES[i] == code)
            {
                return CounterTypes.COUNTED_NAMES[i];
            }
        }
        return "OTHER";
    }

    /** Whether counters of {@code typeId} are a topic's. */
    public static boolean isTopic(final int typeId)
    {
        return typeId == CounterTypes.TOPIC_RECORDS_IN || typeId == CounterTypes.TOPIC_BYTES_IN ||
            typeId == CounterTypes.TOPIC_BYTES_OUT;
    }

    private static Figure figure(final int typeId, final DirectBuffer key, final String label)
    {
        final int thread = key.getInt(0);
        if (isTopic(typeId))
        {
            return new Figure(typeId, thread, 0, topic(key, label));
        }
        final boolean coded = typeId == CounterTypes.REQUESTS || typeId == CounterTypes.API_ERRORS ||
            typeId == CounterTypes.ERROR_CODES || typeId == CounterTypes.REQUEST_ERRORS || typeId == CounterTypes.GROUPS;
        return new Figure(typeId, thread, coded ? key.getInt(4) : 0, null);
    }

    /**
     * The topic in a topic counter's key; a name cut to the key's room (longer than 104 bytes) is taken whole from
     * the label, which {@code BrokerCounters} writes as {@code "<figure> topic=<name> net=<thread>"}.
     */
    private static String topic(final DirectBuffer key, final String label)
    {
        final int length = key.getInt(4);
        if (length < CountersReader.MAX_KEY_LENGTH - 8)
        {
            return key.getStringWithoutLengthUtf8(8, length);
        }
        final int from = label.indexOf(" topic=");
        final int to = label.lastIndexOf(" net=");
        return from >= 0 && to > from ? label.substring(from + " topic=".length(), to) :
            key.getStringWithoutLengthUtf8(8, length);
    }
}
