package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * Two of three nodes down on a running {@link ThreeNodes}: a new topic (replication factor 3,
 * {@code min.insync.replicas=2}), an acks=all producer (no idempotence, no retries: the broker's error reaches its
 * callback) and an acks=1 producer at the steady rate; both followers SIGKILLed (the leader stays); after the down
 * time one follower is started again and timed into the ISR, then the other. The answer is the case's JSON: what each
 * producer got while two were down and after one came back, the errors its callback saw, the rejoin times.
 */
final class TwoDown
{
    private static final long HEALTHY_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final long AFTER_REJOIN_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final int STRICT_PROBES = 5;
    private static final long PROBE_SECONDS = 60;

    private final ThreeNodes cluster;
    private final Admin admin;
    private final KillTheLeader.Options options;

    TwoDown(final ThreeNodes cluster, final Admin admin, final KillTheLeader.Options options)
    {
        this.cluster = cluster;
        this.admin = admin;
        this.options = options;
    }

    ObjectNode run() throws Exception
    {
        final ObjectNode d = JsonNodeFactory.instance.objectNode();
        final ArrayNode problems = d.putArray("problems");
        final String topic = "ktl-two-down";
        final String strict = "ktl-min-isr-3";
        FailoverClients.createTopic(admin, topic, 2);
        FailoverClients.createTopic(admin, strict, 3);
        final TopicPartitionInfo before = FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline());
        final TopicPartitionInfo strictBefore = FailoverClients.awaitPartition(admin, strict, KillTheLeader::fullIsr,
            options.deadline());
        if (before == null || strictBefore == null)
        {
            problems.add(topic + " or " + strict + " never had a leader and the 3 nodes in its ISR");
            return d;
        }
        final int leader = before.leader().id();
        // the first node killed leads neither topic (one of three always does), the second is the other follower
        final int first = IntStream.rangeClosed(1, ThreeNodes.NODES)
            .filter(id -> id != leader && id != strictBefore.leader().id()).findFirst().orElseThrow();
        final int[] followers = {first, IntStream.rangeClosed(1, ThreeNodes.NODES).filter(id -> id != leader && id != first)
            .findFirst().orElseThrow()};
        d.put("leader", leader);
        // every wait below bounded: healthy 2 s, oneDown (deadline + probes x 60 s), down, first acknowledgement and ISR
        // (a deadline each), 3 s after: the schedule covers their sum, and a run that still reaches its end says so
        final long seconds = 2 + options.deadlineSeconds + (long)STRICT_PROBES * PROBE_SECONDS + options.downSeconds
            + 2L * options.deadlineSeconds + 3 + 10;
        final int capacity = Math.toIntExact(options.rate * seconds);
        try (SteadyProducer all = new SteadyProducer(FailoverClients.producer(cluster.bootstrap(), "all", false, 0), topic,
                options.rate, capacity);
            SteadyProducer one = new SteadyProducer(FailoverClients.producer(cluster.bootstrap(), "1", false, -1), topic,
                options.rate, capacity))
        {
            final long started = System.nanoTime();
            all.start();
            one.start();
            LeaderKill.sleepUntil(started + HEALTHY_NANOS);
            final long oneDown = cluster.kill(followers[0]);
            oneDown(d, strict, followers[0], oneDown);
            final long down = cluster.kill(followers[1]);
            LeaderKill.sleepUntil(down + TimeUnit.SECONDS.toNanos(options.downSeconds));
            final TopicPartitionInfo whileDown = FailoverClients.describe(admin, topic);
            d.put("isrWhileDown", whileDown == null ? "(not described)" : LeaderKill.ids(whileDown.isr()));
            final long spawned = cluster.restart(followers[0]);
            d.put("restartedNode", followers[0]);
            final long firstAck = awaitFirstAcknowledgement(all, spawned, options.deadline());
            d.put("restartToFirstAcksAllMs", firstAck < 0 ? -1 : LeaderKill.ms(firstAck - spawned));
            if (firstAck < 0)
            {
                problems.add("no acks=all record sent after the restart of " + followers[0] + " was acknowledged within "
                    + options.deadlineSeconds + " s");
            }
            // the controller quorum is lost with two of three nodes (each is a voter): the ISR may never have shrunk
            d.put("leftIsrWhileDown", whileDown != null && !FailoverClients.inIsr(whileDown, followers[0]));
            final TopicPartitionInfo back = FailoverClients.awaitPartition(admin, topic,
                p -> FailoverClients.inIsr(p, followers[0]), options.deadline());
            final long rejoined = Math.max(System.nanoTime(), firstAck);
            d.put("restartToIsrMs", back == null ? -1 : LeaderKill.ms(System.nanoTime() - spawned));
            d.put("isrAfterRejoin", back == null ? "" : LeaderKill.ids(back.isr()));
            if (back == null)
            {
                problems.add("the restarted node " + followers[0] + " was not in the ISR within " + options.deadlineSeconds + " s");
            }
            LeaderKill.sleepUntil(rejoined + AFTER_REJOIN_NANOS);
            final long end = System.nanoTime();
            all.stop();
            one.stop();
            if (all.ranOut() || one.ranOut())
            {
                problems.add("a producer reached the end of its " + capacity + " records before the end: later windows under-count");
            }
            for (final SteadyProducer p : new SteadyProducer[] {all, one})
            {
                final ObjectNode n = d.putObject(p == all ? "acksAll" : "acks1");
                window(n, "healthy", p, started, oneDown);
                window(n, "oneDown", p, oneDown, down);
                window(n, "twoDown", p, down, spawned);
                window(n, "restartToRejoin", p, spawned, rejoined);
                window(n, "afterRejoin", p, rejoined, end);
                final ObjectNode errors = n.putObject("errors");
                p.errors().forEach(errors::put);
            }
        }
        final long spawned2 = cluster.restart(followers[1]);
        final TopicPartitionInfo full = FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline());
        d.put("secondRestartToFullIsrMs", full == null ? -1 : LeaderKill.ms(System.nanoTime() - spawned2));
        if (full == null)
        {
            problems.add("the ISR was not the 3 nodes again within " + options.deadlineSeconds + " s of the second restart");
        }
        System.out.printf(Locale.ROOT, "%s two down (leader %d, followers %d and %d killed): acks=all %s, errors %s; acks=1 %s, "
                + "errors %s; ISR while down %s; node %d restart to first acks=all acknowledgement %d ms, to ISR %d ms; second restart "
                + "to full ISR %d ms%n",
            cluster.kind.label, leader, followers[0], followers[1], d.path("acksAll").path("windows"),
            d.path("acksAll").path("errors"), d.path("acks1").path("windows"), d.path("acks1").path("errors"),
            d.path("isrWhileDown").asText(), followers[0], d.path("restartToFirstAcksAllMs").asLong(), d.path("restartToIsrMs").asLong(),
            d.path("secondRestartToFullIsrMs").asLong());
        return d;
    }

    /**
     * One node down, the controller quorum still there: waits until {@code strict} ({@code min.insync.replicas=3})
     * has the killed node out of its ISR, then sends it a few acks=all records (no retries) and keeps what each
     * callback saw: NOT_ENOUGH_REPLICAS is what Kafka answers when the ISR is below {@code min.insync.replicas}.
     */
    private void oneDown(final ObjectNode d, final String strict, final int killed, final long killedAt) throws Exception
    {
        final ObjectNode s = d.putObject("strictOneDown");
        s.put("killed", killed);
        final TopicPartitionInfo shrunk = FailoverClients.awaitPartition(admin, strict, p -> !FailoverClients.inIsr(p, killed),
            options.deadline());
        s.put("killToIsrShrinkMs", shrunk == null ? -1 : LeaderKill.ms(System.nanoTime() - killedAt));
        s.put("isr", shrunk == null ? "" : LeaderKill.ids(shrunk.isr()));
        final ObjectNode errors = s.putObject("errors");
        int acked = 0;
        try (var producer = FailoverClients.producer(cluster.bootstrap(), "all", false, 0))
        {
            for (int i = 0; i < STRICT_PROBES; i++)
            {
                try
                {
                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(strict, 0, "p" + i, "p" + i))
                        .get(PROBE_SECONDS, TimeUnit.SECONDS);
                    acked++;
                }
                catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex)
                {
                    final String e = SteadyProducer.describe(ex instanceof java.util.concurrent.ExecutionException ? ex.getCause()
                        : ex);
                    errors.put(e, errors.path(e).asInt() + 1);
                }
            }
        }
        s.put("sent", STRICT_PROBES);
        s.put("acknowledged", acked);
    }

    /** Waits for the first acknowledgement of a record {@code producer} sent after {@code nanos}; its time, or -1 at the deadline. */
    private static long awaitFirstAcknowledgement(final SteadyProducer producer, final long nanos, final long deadline)
        throws InterruptedException
    {
        while (System.nanoTime() < deadline)
        {
            final long[] first = producer.firstAcknowledgedSentAfter(nanos);
            if (first[0] >= 0)
            {
                return first[0];
            }
            Thread.sleep(100);
        }
        return -1;
    }

    /** Of the records sent in (from, to]: how many, how many were acknowledged (whenever); acknowledgements that arrived then. */
    private static void window(final ObjectNode n, final String name, final SteadyProducer p, final long from, final long to)
    {
        final long[] sentAndAcked = p.sentAndAcknowledgedBetween(from, to);
        final ObjectNode w = n.with("windows").putObject(name);
        w.put("sent", sentAndAcked[0]);
        w.put("acknowledged", sentAndAcked[1]);
        w.put("acknowledgementsArrived", p.acknowledgementsBetween(from, to));
        w.put("seconds", Math.round((to - from) / 1e8) / 10.0);
    }
}
