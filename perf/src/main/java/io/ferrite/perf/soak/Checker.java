package io.ferrite.perf.soak;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The soak's checker: given every acknowledgement the producers got, every record the consumers read (in the order
 * they read them), each partition's high watermark after healing and every replica's copy of every partition up to
 * it ({@link ReplicaReader}), it counts the violations of what an idempotent acks=all producer is promised:
 * <ul>
 * <li><b>lost</b>: an acknowledged record not at its acknowledged offset (below the high watermark) in a replica
 *     that reaches the high watermark; a record acknowledged without an offset ({@link #UNKNOWN_OFFSET}: kafka-clients
 *     completes a batch answered DUPLICATE_SEQUENCE_NUMBER as a success with offset -1) is counted apart and lost when
 *     such a replica does not hold it anywhere below the high watermark;</li>
 * <li><b>duplicated</b>: a record (producer, number) more than once in a replica's partition;</li>
 * <li><b>reordered</b>: a producer's record at a higher offset than a later-numbered one of that producer in the same
 *     partition of a replica;</li>
 * <li><b>divergent</b>: a partition whose replicas' batches below the high watermark are not byte for byte the same
 *     (a replica holding fewer batches counts when it reaches the high watermark too);</li>
 * <li><b>behind</b>: a replica whose last batch ends below the high watermark (it had not caught up when read):
 *     reported as that, not as lost or divergent; the records it holds are checked, the offsets it lacks are not;</li>
 * <li><b>backwards</b>: a consumer reading a partition's offset at or below one it read before;</li>
 * <li><b>disappeared</b>: a record a consumer read that a replica does not hold at that offset below the high
 *     watermark.</li>
 * </ul>
 * Values are {@code p<producer>-<number>} ({@link SoakProducer#value}); anything else in a log is counted as foreign.
 */
final class Checker
{
    record Ack(int producer, int number, int partition, long offset)
    {
    }

    record Seen(int consumer, int partition, long offset, String value)
    {
    }

    record Entry(long offset, String value)
    {
    }

    record Batch(long baseOffset, long lastOffset, byte[] bytes, List<Entry> entries)
    {
    }

    record Replica(int node, int partition, List<Batch> batches)
    {
        /** The offset after its last batch (0 when it has none). */
        long end()
        {
            return batches.isEmpty() ? 0 : batches.get(batches.size() - 1).lastOffset() + 1;
        }
    }

    /** The offset of an {@link Ack} whose acknowledgement carried none. */
    static final long UNKNOWN_OFFSET = -1;

    private static final int SAMPLES = 10;

    /** The counts, with up to 10 examples of each violation. */
    static final class Result
    {
        long acknowledged;
        long acknowledgedOffsetUnknown;
        long consumed;
        long lost;
        long duplicated;
        long reordered;
        long divergentPartitions;
        long backwards;
        long disappeared;
        long foreign;
        long behind;
        final Map<String, List<String>> samples = new TreeMap<>();
        final Map<String, String> replicas = new TreeMap<>();

        boolean ok()
        {
            return lost == 0 && duplicated == 0 && reordered == 0 && divergentPartitions == 0 && backwards == 0
                && disappeared == 0 && behind == 0;
        }

        private void sample(final String kind, final String what)
        {
            final List<String> list = samples.computeIfAbsent(kind, k -> new ArrayList<>());
            if (list.size() < SAMPLES)
            {
                list.add(what);
            }
        }

        ObjectNode toJson()
        {
            final ObjectNode o = JsonNodeFactory.instance.objectNode();
            o.put("ok", ok());
            o.put("acknowledged", acknowledged);
            o.put("acknowledgedOffsetUnknown", acknowledgedOffsetUnknown);
            o.put("consumed", consumed);
            o.put("lost", lost);
            o.put("duplicated", duplicated);
            o.put("reordered", reordered);
            o.put("divergentPartitions", divergentPartitions);
            o.put("replicasBehind", behind);
            o.put("consumerOffsetWentBackwards", backwards);
            o.put("consumedThenDisappeared", disappeared);
            o.put("foreignRecords", foreign);
            final ObjectNode r = o.putObject("replicas");
            replicas.forEach(r::put);
            final ObjectNode s = o.putObject("samples");
            samples.forEach((k, v) -> v.forEach(s.withArray(k)::add));
            return o;
        }
    }

    private Checker()
    {
    }

    static Result check(final List<Ack> acks, final List<Seen> seen, final Map<Integer, Long> highWatermarks,
        final List<Replica> replicas)
    {
        final Result result = new Result();
        result.acknowledged = acks.size();
        result.consumed = seen.size();
        final Map<Integer, List<Replica>> byPartition = new TreeMap<>();
        replicas.forEach(r -> byPartition.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r));
        // by identity: a record's hashCode would hash every batch of the replica at each look-up
        final Map<Replica, Map<Long, String>> logs = new IdentityHashMap<>();
        for (final Replica r : replicas)
        {
            logs.put(r, logOf(r, highWatermarks.getOrDefault(r.partition(), 0L), result));
        }
        for (final Replica r : replicas)
        {
            final long hw = highWatermarks.getOrDefault(r.partition(), 0L);
            if (r.end() < hw)
            {
                result.behind++;
                result.sample("behind", "node " + r.node() + " partition " + r.partition() + " holds up to offset "
                    + (r.end() - 1) + ", below the high watermark " + hw);
            }
        }
        final Set<Ack> lost = new HashSet<>();
        final Map<Replica, Set<String>> values = new IdentityHashMap<>();
        for (final Ack a : acks)
        {
            final String value = SoakProducer.value(a.producer(), a.number());
            final long hw = highWatermarks.getOrDefault(a.partition(), 0L);
            result.acknowledgedOffsetUnknown += a.offset() == UNKNOWN_OFFSET ? 1 : 0;
            for (final Replica r : byPartition.getOrDefault(a.partition(), List.of()))
            {
                final boolean held;
                if (a.offset() == UNKNOWN_OFFSET)
                {
                    held = r.end() < hw || values.computeIfAbsent(r, k -> new HashSet<>(logs.get(k).values())).contains(value);
                }
                else
                {
                    held = a.offset() < hw && a.offset() >= r.end() || value.equals(logs.get(r).get(a.offset()));
                }
                if (!held && lost.add(a))
                {
                    result.sample("lost", value + " acknowledged at partition " + a.partition() + " offset "
                        + (a.offset() == UNKNOWN_OFFSET ? "unknown" : a.offset()) + ", node " + r.node() + " has "
                        + (a.offset() == UNKNOWN_OFFSET ? "it nowhere below the high watermark" : logs.get(r).get(a.offset())));
                }
            }
        }
        result.lost = lost.size();
        for (final Map.Entry<Integer, List<Replica>> p : byPartition.entrySet())
        {
            compareReplicas(p.getKey(), p.getValue(), highWatermarks.getOrDefault(p.getKey(), 0L), result);
        }
        checkConsumers(seen, byPartition, logs, highWatermarks, result);
        return result;
    }

    /** A replica's records by offset below {@code hw}; counts its duplicates, reorders and foreign records. */
    private static Map<Long, String> logOf(final Replica r, final long hw, final Result result)
    {
        final Map<Long, String> log = new HashMap<>();
        final Map<String, Long> firstAt = new HashMap<>();
        final Map<String, Integer> lastNumber = new HashMap<>();
        long records = 0;
        for (final Batch b : r.batches())
        {
            for (final Entry e : b.entries())
            {
                if (e.offset() >= hw)
                {
                    continue;
                }
                records++;
                log.put(e.offset(), e.value());
                final int dash = e.value() == null ? -1 : e.value().indexOf('-');
                if (dash < 2 || e.value().charAt(0) != 'p')
                {
                    result.foreign++;
                    continue;
                }
                final Long before = firstAt.putIfAbsent(e.value(), e.offset());
                if (before != null)
                {
                    result.duplicated++;
                    result.sample("duplicated", e.value() + " in node " + r.node() + " partition " + r.partition()
                        + " at offsets " + before + " and " + e.offset());
                    continue;
                }
                final String producer = e.value().substring(0, dash);
                final int number = Integer.parseInt(e.value().substring(dash + 1));
                final Integer last = lastNumber.put(producer, number);
                if (last != null && last > number)
                {
                    result.reordered++;
                    result.sample("reordered", e.value() + " at node " + r.node() + " partition " + r.partition()
                        + " offset " + e.offset() + " after " + producer + "-" + last);
                }
            }
        }
        result.replicas.put("partition " + r.partition() + " node " + r.node(), records + " records below the high watermark "
            + hw + " in " + r.batches().size() + " batches");
        return log;
    }

    /**
     * Whether every replica of a partition has the same batches, byte for byte, against the one that reaches furthest
     * (a replica behind is compared on what it holds); the first difference as a sample.
     */
    private static void compareReplicas(final int partition, final List<Replica> replicas, final long hw, final Result result)
    {
        Replica first = replicas.get(0);
        for (final Replica r : replicas)
        {
            first = r.end() > first.end() ? r : first;
        }
        boolean divergent = false;
        for (final Replica other : replicas)
        {
            if (other == first)
            {
                continue;
            }
            final String difference = difference(first, other, hw);
            if (difference != null)
            {
                divergent = true;
                result.sample("divergent", "partition " + partition + ": node " + other.node() + " differs from node "
                    + first.node() + " " + difference);
            }
        }
        result.divergentPartitions += divergent ? 1 : 0;
    }

    private static String difference(final Replica a, final Replica b, final long hw)
    {
        final int common = Math.min(a.batches().size(), b.batches().size());
        for (int i = 0; i < common; i++)
        {
            final Batch x = a.batches().get(i);
            final Batch y = b.batches().get(i);
            if (!Arrays.equals(x.bytes(), y.bytes()))
            {
                return "at batch " + i + " (offsets " + x.baseOffset() + ".." + x.lastOffset() + " against "
                    + y.baseOffset() + ".." + y.lastOffset() + ")";
            }
        }
        if (a.batches().size() != b.batches().size() && a.end() >= hw && b.end() >= hw)
        {
            return "in length: " + a.batches().size() + " batches against " + b.batches().size();
        }
        return null;
    }

    private static void checkConsumers(final List<Seen> seen, final Map<Integer, List<Replica>> byPartition,
        final Map<Replica, Map<Long, String>> logs, final Map<Integer, Long> highWatermarks, final Result result)
    {
        final Map<String, Long> lastOffset = new HashMap<>();
        for (final Seen s : seen)
        {
            final Long before = lastOffset.put(s.consumer() + "/" + s.partition(), s.offset());
            if (before != null && before >= s.offset())
            {
                result.backwards++;
                result.sample("backwards", "consumer " + s.consumer() + " partition " + s.partition() + " read offset "
                    + s.offset() + " after offset " + before);
            }
            final long hw = highWatermarks.getOrDefault(s.partition(), 0L);
            for (final Replica r : byPartition.getOrDefault(s.partition(), List.of()))
            {
                if (s.offset() < hw && s.offset() >= r.end())
                {
                    continue; // a replica behind: counted as that
                }
                final String held = logs.get(r).get(s.offset());
                if (!String.valueOf(s.value()).equals(held))
                {
                    result.disappeared++;
                    result.sample("disappeared", "consumer " + s.consumer() + " read " + s.value() + " at partition "
                        + s.partition() + " offset " + s.offset() + ", node " + r.node() + " has " + held);
                    break;
                }
            }
        }
    }
}
