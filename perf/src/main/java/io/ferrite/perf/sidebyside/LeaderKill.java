package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * One kill-the-leader case on a running {@link ThreeNodes}: a new topic, a {@link SteadyProducer} with the given
 * acks sending its whole schedule, the leader SIGKILLed once half of the records are sent, the partition read back
 * from the survivors, the killed node started again and timed back into the ISR, then the leader of then killed
 * too and the partition read back again through the other two (the first killed node among them, often leading:
 * see {@link #rejoin}): every acknowledgement is checked against both reads. The answer is the case's JSON.
 */
final class LeaderKill
{
    private final ThreeNodes cluster;
    private final Admin admin;
    private final KillTheLeader.Options options;

    LeaderKill(final ThreeNodes cluster, final Admin admin, final KillTheLeader.Options options)
    {
        this.cluster = cluster;
        this.admin = admin;
        this.options = options;
    }

    ObjectNode run(final String acks, final int round) throws Exception
    {
        final ObjectNode c = JsonNodeFactory.instance.objectNode();
        c.put("acks", acks);
        c.put("round", round);
        final ArrayNode problems = c.putArray("problems");
        final String topic = "ktl-acks" + acks + "-r" + round;
        FailoverClients.createTopic(admin, topic, 2);
        final TopicPartitionInfo before = FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline());
        if (before == null)
        {
            problems.add(topic + " never had a leader and the 3 nodes in its ISR");
            return c;
        }
        final int capacity = options.rate * options.seconds;
        final SteadyProducer producer = new SteadyProducer(FailoverClients.producer(cluster.bootstrap(), acks, "all".equals(acks), -1),
            topic, options.rate, capacity).start();
        final long killed;
        final int leader;
        final int[] survivors;
        try
        {
            if (!producer.awaitSent(capacity / 2, options.deadline()))
            {
                problems.add("the producer did not send half of its " + capacity + " records within " + options.deadlineSeconds + " s");
                return c;
            }
            final TopicPartitionInfo now = FailoverClients.describe(admin, topic);
            if (now == null || now.leader() == null || now.leader().id() < 0)
            {
                problems.add("no leader at the midpoint (" + (now == null ? "not described" : "ISR " + ids(now.isr())) + "): nothing killed");
                producer.finish(options.deadline());
                return c;
            }
            leader = now.leader().id();
            c.put("leader", leader);
            killed = cluster.kill(leader);
            survivors = IntStream.rangeClosed(1, ThreeNodes.NODES).filter(id -> id != leader).toArray();
            try (Admin survivorsAdmin = FailoverClients.admin(cluster.bootstrapOf(survivors)))
            {
                final TopicPartitionInfo after = FailoverClients.awaitPartition(survivorsAdmin, topic,
                    p -> p.leader() != null && p.leader().id() >= 0 && p.leader().id() != leader, options.deadline());
                c.put("newLeader", after == null ? -1 : after.leader().id());
                c.put("newLeaderInMetadataMs", after == null ? -1 : ms(System.nanoTime() - killed));
                c.put("isrAfterKill", after == null ? "" : ids(after.isr()));
                if (after == null)
                {
                    problems.add("no leader other than the killed " + leader + " within " + options.deadlineSeconds + " s");
                }
            }
            if (!producer.finish(options.deadline()))
            {
                problems.add("the producer had not sent all " + capacity + " records within " + options.deadlineSeconds
                    + " s of the new leader: stopped");
            }
        }
        finally
        {
            producer.close();
        }
        final long[] first = producer.firstAcknowledgedSentAfter(killed);
        c.put("killToFirstAckMs", first[0] < 0 ? -1 : ms(first[0] - killed));
        final long anyAck = producer.firstAcknowledgementAfter(killed);
        c.put("killToFirstAckAnyRecordMs", anyAck < 0 ? -1 : ms(anyAck - killed));
        c.put("sent", producer.sent());
        c.put("acknowledged", producer.acknowledged());
        c.put("acknowledgedOfSentAfterKill", producer.acknowledgedOfSentAfter(killed));
        final ObjectNode errors = c.putObject("errors");
        producer.errors().forEach(errors::put);
        // every acknowledgement from the first one of a record sent after the kill on came from the new leader: the
        // partition's end offset (high watermark) must reach the highest of them before it is read (acks=1 answers
        // before the followers have the record)
        final long minEnd = first[0] < 0 ? 0 : producer.highestOffsetAcknowledgedFrom(first[0]) + 1;
        c.put("highestOffsetAcknowledgedByNewLeader", minEnd - 1);
        final FailoverClients.ReadBack afterKill = FailoverClients.readBack(cluster.bootstrapOf(survivors), topic, minEnd,
            options.deadline());
        if (afterKill == null)
        {
            problems.add("the partition was not read back from the survivors to an end offset >= " + minEnd + " within "
                + options.deadlineSeconds + " s");
        }
        final FailoverClients.ReadBack afterRejoin = rejoin(c, leader, topic, minEnd);
        check(c, producer, afterKill, afterRejoin);
        System.out.printf(Locale.ROOT, "%s acks=%s round %d: sent %d, acknowledged %d, read back %d then %d, acknowledged-but-lost "
                + "%d (%d after the kill, %d after the rejoin), duplicates %d; leader %d killed, new leader %d in metadata after %d ms, "
                + "first acknowledgement after the kill %d ms; restart to ISR %d ms; read again led by %d; errors %s%n",
            cluster.kind.label, acks, round, c.path("sent").asLong(), c.path("acknowledged").asLong(), c.path("readBack").asLong(),
            c.path("readBackAfterRejoin").asLong(), c.path("acknowledgedButLost").asLong(),
            c.path("acknowledgedButLostAfterKill").asLong(), c.path("acknowledgedButLostAfterRejoin").asLong(),
            c.path("duplicates").asLong(), leader, c.path("newLeader").asInt(), c.path("newLeaderInMetadataMs").asLong(),
            c.path("killToFirstAckMs").asLong(), c.path("restartToIsrMs").asLong(), c.path("leaderAfterRejoin").asInt(),
            c.path("errors"));
        return c;
    }

    /**
     * Starts the killed node again, times it into the ISR and waits for the 3 nodes in the ISR; then SIGKILLs the
     * partition's leader of then too (no record is being sent: every acknowledged one is in the 3 replicas or lost
     * already), so that one of the two others leads (the first killed node when it is the first of the partition's
     * replicas in the ISR, as the controller elects): the partition is read back through those two, and the second
     * killed node is started again until the ISR is the 3 nodes. (ElectLeaders PREFERRED would move leadership without
     * a kill, but Ferrite's brokers do not take it and kafka-clients' Admin does not send it to controllers.)
     */
    private FailoverClients.ReadBack rejoin(final ObjectNode c, final int leader, final String topic, final long minEnd)
        throws Exception
    {
        final ArrayNode problems = c.withArray("problems");
        final long spawned = cluster.restart(leader);
        final TopicPartitionInfo back = FailoverClients.awaitPartition(admin, topic, p -> FailoverClients.inIsr(p, leader),
            options.deadline());
        c.put("restartToIsrMs", back == null ? -1 : ms(System.nanoTime() - spawned));
        if (back == null)
        {
            problems.add("the restarted node " + leader + " was not in the ISR within " + options.deadlineSeconds + " s");
            return null;
        }
        final TopicPartitionInfo full = FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline());
        if (full == null)
        {
            problems.add("the ISR was not the 3 nodes again within " + options.deadlineSeconds + " s");
            return null;
        }
        final int second = full.leader().id();
        c.put("secondKilled", second);
        cluster.kill(second);
        final int[] others = IntStream.rangeClosed(1, ThreeNodes.NODES).filter(id -> id != second).toArray();
        final FailoverClients.ReadBack read;
        try (Admin othersAdmin = FailoverClients.admin(cluster.bootstrapOf(others)))
        {
            final TopicPartitionInfo led = FailoverClients.awaitPartition(othersAdmin, topic,
                p -> p.leader() != null && p.leader().id() >= 0 && p.leader().id() != second, options.deadline());
            c.put("leaderAfterRejoin", led == null ? -1 : led.leader().id());
            read = led == null ? null : FailoverClients.readBack(cluster.bootstrapOf(others), topic, minEnd, options.deadline());
            if (read == null)
            {
                problems.add((led == null ? "no leader other than " + second + " (killed second)" : "the partition was not read "
                    + "back after the rejoin to an end offset >= " + minEnd) + " within " + options.deadlineSeconds + " s");
            }
        }
        cluster.restart(second);
        if (FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline()) == null)
        {
            problems.add("the ISR was not the 3 nodes again within " + options.deadlineSeconds + " s of the second restart");
        }
        return read;
    }

    /**
     * Checks every acknowledgement against both reads (a read that failed is left out; it is a problem already):
     * acknowledged but lost = acknowledged and its number absent from either read.
     */
    private static void check(final ObjectNode c, final SteadyProducer producer, final FailoverClients.ReadBack afterKill,
        final FailoverClients.ReadBack afterRejoin)
    {
        final Tally first = Tally.of(afterKill, producer.capacity());
        final Tally second = Tally.of(afterRejoin, producer.capacity());
        long lost = 0;
        long lostFirst = 0;
        long lostSecond = 0;
        long moved = 0;
        final ArrayNode lostSample = c.putArray("lostSample");
        for (int n = 0; n < producer.capacity(); n++)
        {
            final long offset = producer.offset(n);
            if (offset < 0)
            {
                continue;
            }
            final boolean goneFirst = first != null && first.times[n] == 0;
            final boolean goneSecond = second != null && second.times[n] == 0;
            lostFirst += goneFirst ? 1 : 0;
            lostSecond += goneSecond ? 1 : 0;
            if (goneFirst || goneSecond)
            {
                lost++;
                if (lostSample.size() < 10)
                {
                    lostSample.add(n + "@" + offset + (goneFirst ? "" : " (after the rejoin)"));
                }
            }
            else if (first != null && first.movedAway(n, offset) || second != null && second.movedAway(n, offset))
            {
                moved++; // read back, but not at the offset its acknowledgement named
            }
        }
        if (first != null)
        {
            c.put("readBack", first.records);
            c.put("endOffsetAfterKill", first.end);
            c.put("distinctReadBack", first.distinct());
            c.put("acknowledgedButLostAfterKill", lostFirst);
        }
        if (second != null)
        {
            c.put("readBackAfterRejoin", second.records);
            c.put("endOffsetAfterRejoin", second.end);
            c.put("acknowledgedButLostAfterRejoin", lostSecond);
        }
        c.put("acknowledgedButLost", lost);
        c.put("acknowledgedAtAnotherOffset", moved);
        c.put("duplicates", Math.max(first == null ? 0 : first.duplicates(), second == null ? 0 : second.duplicates()));
        c.put("foreignRecords", Math.max(first == null ? 0 : first.foreign, second == null ? 0 : second.foreign));
    }

    /** One read back by record number: how often each was read, the number at each offset, records of no number. */
    private static final class Tally
    {
        final int[] times;
        final Map<Long, String> byOffset = new HashMap<>();
        final long end;
        final int records;
        long foreign;

        private Tally(final FailoverClients.ReadBack read, final int capacity)
        {
            times = new int[capacity];
            end = read.end();
            records = read.records().size();
            for (final FailoverClients.Read r : read.records())
            {
                byOffset.put(r.offset(), r.key());
                final int n = r.key() == null ? -1 : Integer.parseInt(r.key());
                if (n >= 0 && n < times.length)
                {
                    times[n]++;
                }
                else
                {
                    foreign++;
                }
            }
        }

        static Tally of(final FailoverClients.ReadBack read, final int capacity)
        {
            return read == null ? null : new Tally(read, capacity);
        }

        boolean movedAway(final int n, final long offset)
        {
            return !Integer.toString(n).equals(byOffset.get(offset));
        }

        long distinct()
        {
            return IntStream.of(times).filter(t -> t > 0).count();
        }

        long duplicates()
        {
            return IntStream.of(times).map(t -> Math.max(0, t - 1)).asLongStream().sum();
        }
    }

    static String ids(final List<org.apache.kafka.common.Node> nodes)
    {
        return nodes.stream().map(n -> Integer.toString(n.id())).sorted().reduce((a, b) -> a + "," + b).orElse("");
    }

    static void sleepUntil(final long nanos) throws InterruptedException
    {
        final long wait = nanos - System.nanoTime();
        if (wait > 0)
        {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    static long ms(final long nanos)
    {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
