package io.ferrite.perf.damage;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Reads a partition from its log start to the end offset the broker announced, with a
 * kafka-clients consumer (assign, no group, {@code check.crcs} on, {@code auto.offset.reset=none}
 * so that an out-of-range answer is seen rather than silently reset), and checks each record
 * against {@link Records#value}. A client exception is counted and the reader seeks one past the
 * offset it is stuck at, as Kafka's message tells an application to; a reader that gets no record
 * and no exception for {@code stall} is wedged, and reading stops there.
 */
final class ReadBack
{
    /** More exceptions than this in one read and the reader gives up (each one costs a round trip). */
    static final int MAX_ERRORS = 20_000;

    /** What one read saw. */
    static final class Outcome
    {
        final BitSet intact = new BitSet();
        long delivered;
        long corrupt;
        String firstCorrupt;
        boolean wedged;
        long wedgedAt = -1;
        String stopped = "";
        final Map<String, Integer> errors = new TreeMap<>();
        long skipped;

        int intactCount()
        {
            return intact.cardinality();
        }

        /** The offsets below {@code expected} that were not served intact, as ranges: "3120-3199, 5000-10999". */
        String lostRanges(final int expected, final int maxRanges)
        {
            final StringBuilder out = new StringBuilder();
            int ranges = 0;
            int from = intact.nextClearBit(0);
            while (from < expected)
            {
                final int to = Math.min(expected, intact.nextSetBit(from) < 0 ? expected : intact.nextSetBit(from)) - 1;
                if (ranges++ == maxRanges)
                {
                    out.append(", ...");
                    break;
                }
                out.append(out.length() == 0 ? "" : ", ").append(from == to ? Integer.toString(from) : from + "-" + to);
                from = intact.nextClearBit(to + 1);
            }
            return out.toString();
        }
    }

    private ReadBack()
    {
    }

    static Outcome read(final String bootstrap, final String topic, final int expected, final long endOffset,
        final Duration stall, final Duration total)
    {
        final Outcome o = new Outcome();
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        final TopicPartition tp = new TopicPartition(topic, 0);
        final long deadline = System.nanoTime() + total.toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p))
        {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long lastProgress = System.nanoTime();
            long position = -1;
            while (true)
            {
                final long now = System.nanoTime();
                if (now - lastProgress > stall.toNanos())
                {
                    o.wedged = true;
                    o.wedgedAt = position;
                    o.stopped = "wedged: no record and no error for " + stall.toSeconds() + " s at offset " + position;
                    break;
                }
                if (now > deadline)
                {
                    o.stopped = "read deadline (" + total.toSeconds() + " s) passed at offset " + position;
                    break;
                }
                if (o.errors.values().stream().mapToInt(Integer::intValue).sum() > MAX_ERRORS)
                {
                    o.stopped = "gave up after " + MAX_ERRORS + " client exceptions at offset " + position;
                    break;
                }
                try
                {
                    position = consumer.position(tp, Duration.ofSeconds(5));
                }
                catch (final KafkaException ex)
                {
                    count(o, "position(): ", ex); // no progress: the stall clock runs on
                    continue;
                }
                if (position >= endOffset)
                {
                    o.stopped = "reached the end offset " + endOffset;
                    break;
                }
                final ConsumerRecords<byte[], byte[]> records;
                try
                {
                    records = consumer.poll(Duration.ofMillis(500));
                }
                catch (final KafkaException ex)
                {
                    count(o, "", ex);
                    final long at;
                    try
                    {
                        at = consumer.position(tp, Duration.ofSeconds(5));
                    }
                    catch (final KafkaException again)
                    {
                        count(o, "position(): ", again);
                        continue;
                    }
                    consumer.seek(tp, at + 1);
                    o.skipped++;
                    lastProgress = System.nanoTime();
                    continue;
                }
                for (final ConsumerRecord<byte[], byte[]> r : records)
                {
                    o.delivered++;
                    if (r.offset() < expected && Records.intact(r.offset(), r.value()))
                    {
                        o.intact.set((int) r.offset());
                    }
                    else
                    {
                        o.corrupt++;
                        if (o.firstCorrupt == null)
                        {
                            o.firstCorrupt = "offset " + r.offset() + ": value starts " + preview(r.value());
                        }
                    }
                }
                if (!records.isEmpty())
                {
                    lastProgress = System.nanoTime();
                }
            }
        }
        catch (final KafkaException ex)
        {
            count(o, "consumer: ", ex);
            o.stopped = "consumer failed: " + ex;
        }
        return o;
    }

    private static void count(final Outcome o, final String where, final Exception ex)
    {
        final Throwable cause = ex.getCause();
        final String text = where + ex.getClass().getSimpleName() + (cause == null ? "" : " caused by " + cause.getClass().getSimpleName())
            + ": " + firstSentence(ex.getMessage());
        o.errors.merge(text, 1, Integer::sum);
    }

    /** The message without the partition's offsets, so that one kind of error is one line with a count. */
    static String firstSentence(final String message)
    {
        if (message == null)
        {
            return "";
        }
        final String s = message.replaceAll("\\d{2,}", "N");
        final int dot = s.indexOf(". ");
        return dot > 0 ? s.substring(0, dot + 1) : s;
    }

    private static String preview(final byte[] value)
    {
        if (value == null)
        {
            return "(null)";
        }
        final StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < Math.min(16, value.length); i++)
        {
            final char c = (char) (value[i] & 0xff);
            out.append(c >= 32 && c < 127 ? c : '?');
        }
        return out.append("\" (").append(value.length).append(" bytes)").toString();
    }
}
