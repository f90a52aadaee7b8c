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
 * acks, the leader SIGKILLed at the midpoint, the partition read back from the survivors and the acknowledgements
 * checked against it, the killed node started again and timed back into the ISR. The answer is the case's JSON.
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
        final long startedAt = System.nanoTime();
        final long killed;
        final int leader;
        try (SteadyProducer producer = new SteadyProducer(FailoverClients.producer(cluster.bootstrap(), acks, "all".equals(acks), -1),
            topic, options.rate, capacity).start())
        {
            sleepUntil(startedAt + TimeUnit.SECONDS.toNanos(options.seconds) / 2);
            final TopicPartitionInfo now = FailoverClients.describe(admin, topic);
            leader = now == null ? before.leader().id() : now.leader().id();
            c.put("leader", leader);
            killed = cluster.kill(leader);
            final int[] survivors = IntStream.rangeClosed(1, ThreeNodes.NODES).filter(id -> id != leader).toArray();
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
            sleepUntil(startedAt + TimeUnit.SECONDS.toNanos(options.seconds));
            producer.stop();
            final long[] first = producer.firstAcknowledgedSentAfter(killed);
            c.put("killToFirstAckMs", first[0] < 0 ? -1 : ms(first[0] - killed));
            final long anyAck = producer.firstAcknowledgementAfter(killed);
            c.put("killToFirstAckAnyRecordMs", anyAck < 0 ? -1 : ms(anyAck - killed));
            c.put("sent", producer.sent());
            c.put("acknowledged", producer.acknowledged());
            c.put("acknowledgedOfSentAfterKill", producer.acknowledgedOfSentAfter(killed));
            final ObjectNode errors = c.putObject("errors");
            producer.errors().forEach(errors::put);
            check(c, producer, survivors, topic);
        }
        final long spawned = cluster.restart(leader);
        final TopicPartitionInfo back = FailoverClients.awaitPartition(admin, topic, p -> FailoverClients.inIsr(p, leader),
            options.deadline());
        c.put("restartToIsrMs", back == null ? -1 : ms(System.nanoTime() - spawned));
        if (back == null)
        {
            problems.add("the restarted node " + leader + " was not in the ISR within " + options.deadlineSeconds + " s");
        }
        else if (FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline()) == null)
        {
            problems.add("the ISR was not the 3 nodes again within " + options.deadlineSeconds + " s");
        }
        System.out.printf(Locale.ROOT, "%s acks=%s round %d: sent %d, acknowledged %d, read back %d, acknowledged-but-lost %d, "
                + "duplicates %d; leader %d killed, new leader %d in metadata after %d ms, first acknowledgement after the kill "
                + "%d ms; restart to ISR %d ms; errors %s%n", cluster.kind.label, acks, round, c.path("sent").asLong(),
            c.path("acknowledged").asLong(), c.path("readBack").asLong(), c.path("acknowledgedButLost").asLong(),
            c.path("duplicates").asLong(), leader, c.path("newLeader").asInt(), c.path("newLeaderInMetadataMs").asLong(),
            c.path("killToFirstAckMs").asLong(), c.path("restartToIsrMs").asLong(), c.path("errors"));
        return c;
    }

    /** Reads the partition back from the survivors and checks every acknowledgement against it. */
    private void check(final ObjectNode c, final SteadyProducer producer, final int[] survivors, final String topic)
    {
        final List<FailoverClients.Read> read = FailoverClients.readBack(cluster.bootstrapOf(survivors), topic, options.deadline());
        if (read == null)
        {
            c.withArray("problems").add("the partition was not read back to its end offset within " + options.deadlineSeconds + " s");
            return;
        }
        final Map<Long, String> byOffset = new HashMap<>();
        final int[] times = new int[producer.capacity()];
        long foreign = 0;
        for (final FailoverClients.Read r : read)
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
        long lost = 0;
        long moved = 0;
        long duplicates = 0;
        final ArrayNode lostSample = c.putArray("lostSample");
        for (int n = 0; n < times.length; n++)
        {
            duplicates += Math.max(0, times[n] - 1);
            final long offset = producer.offset(n);
            if (offset < 0)
            {
                continue;
            }
            if (times[n] == 0)
            {
                lost++;
                if (lostSample.size() < 10)
                {
                    lostSample.add(n + "@" + offset);
                }
            }
            else if (!Integer.toString(n).equals(byOffset.get(offset)))
            {
                moved++; // read back, but not at the offset its acknowledgement named
            }
        }
        c.put("readBack", read.size());
        c.put("distinctReadBack", IntStream.of(times).filter(t -> t > 0).count());
        c.put("acknowledgedButLost", lost);
        c.put("acknowledgedAtAnotherOffset", moved);
        c.put("duplicates", duplicates);
        c.put("foreignRecords", foreign);
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
