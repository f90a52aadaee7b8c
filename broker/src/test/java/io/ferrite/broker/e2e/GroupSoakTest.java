package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Churn (ten seconds by default, a minute in the {@code long} profile): four consumers of one group join and leave at random (each online 1-7 s, then away
 * up to 2.5 s) while a producer writes. Two offer only cooperative-sticky, two prefer range (so the group
 * switches protocol as membership changes), and one is a static member whose short absences do not
 * rebalance. Each consumer processes what it reads and commits after every batch and when partitions are
 * revoked. At the end every produced record was processed at least once and the group's committed offsets
 * equal the end offsets. The duration is the system property ferrite.groupSoak.seconds (default 10, 60 with -Plong).
 * A soak of fixed length: tagged {@code slow}, out of the default build, run by {@code -Pslow} (CI's second step).
 */
@Tag("slow")
class GroupSoakTest
{
    private static final long SECONDS = Long.getLong("ferrite.groupSoak.seconds", 10);
    private static final String TOPIC = "churn";
    private static final String GROUP = "churners";
    private static final int PARTITIONS = 6;
    private static final int SLOTS = 4;

    @TempDir
    Path dir;

    private final Set<Long> produced = ConcurrentHashMap.newKeySet();
    private final Set<Long> processed = ConcurrentHashMap.newKeySet();
    private final AtomicLong processedWithRepeats = new AtomicLong();
    private final AtomicLong sessions = new AtomicLong();
    private final AtomicLong assignments = new AtomicLong();
    private final AtomicLong failedCommits = new AtomicLong();
    private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
    private volatile boolean finished;

    @Test
    void membersComingAndGoingWhileAProducerWritesLoseNothing() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0")); Admin admin = broker.admin())
        {
            final List<TopicPartition> partitions = Members.createTopic(admin, TOPIC, PARTITIONS);
            final long churnEnd = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(SECONDS);

            final Thread producer = new Thread(() -> produce(broker, churnEnd), "soak-producer");
            producer.start();
            final List<Thread> slots = new ArrayList<>();
            for (int s = 0; s < SLOTS; s++)
            {
                final int slot = s;
                final Thread t = new Thread(() -> slot(broker, slot, churnEnd), "soak-slot-" + slot);
                t.start();
                slots.add(t);
            }
            producer.join();
            assertTrue(failures.isEmpty(), "producer failures: " + failures);

            final Map<TopicPartition, Long> end = new HashMap<>();
            final Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> latest = admin.listOffsets(
                partitions.stream().collect(java.util.stream.Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()))).all()
                .get(20, TimeUnit.SECONDS);
            latest.forEach((tp, info) -> end.put(tp, info.offset()));
            assertEquals(produced.size(), end.values().stream().mapToLong(Long::longValue).sum(),
                "every acknowledged record is in the log once");

            // all four stay online now until the group has processed and committed everything
            try
            {
                await(() -> !failures.isEmpty() || committed(admin).equals(end) && processed.containsAll(produced), Duration.ofSeconds(90),
                    () -> "the group to process and commit everything (" + processed.size() + " of " + produced.size() + " processed)");
            }
            finally
            {
                finished = true; // the slots stop either way
            }
            for (final Thread t : slots)
            {
                t.join(60_000);
                assertTrue(!t.isAlive(), t.getName() + " stopped");
            }
            assertTrue(failures.isEmpty(), "consumer failures: " + failures);

            final Set<Long> missing = new HashSet<>(produced);
            missing.removeAll(processed);
            System.out.println("group soak: " + SECONDS + " s, " + produced.size() + " records produced, "
                + processedWithRepeats.get() + " processed (" + (processedWithRepeats.get() - processed.size()) + " repeats), "
                + sessions.get() + " consumer sessions, " + assignments.get() + " assignments, " + failedCommits.get()
                + " commits refused during rebalances");
            assertTrue(produced.size() > 1_000, "the producer wrote: " + produced.size());
            assertTrue(sessions.get() > SLOTS * 2, "members came and went: " + sessions.get() + " sessions");
            assertTrue(missing.isEmpty(), missing.size() + " produced records never processed, e.g. "
                + missing.stream().limit(10).toList());
            assertEquals(end, committed(admin), "committed offsets are the end offsets");
        }
    }

    private Map<TopicPartition, Long> committed(final Admin admin) throws Exception
    {
        final Map<TopicPartition, Long> map = new HashMap<>();
        final Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
            .get(20, TimeUnit.SECONDS);
        offsets.forEach((tp, o) ->
        {
            if (o != null)
            {
                map.put(tp, o.offset());
            }
        });
        return map;
    }

    private void produce(final RunningBroker broker, final long until)
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            long seq = 0;
            while (System.currentTimeMillis() < until && failures.isEmpty())
            {
                for (int i = 0; i < 5; i++)
                {
                    final long id = seq++;
                    final byte[] bytes = ByteBuffer.allocate(8).putLong(id).array();
                    producer.send(new ProducerRecord<>(TOPIC, bytes, bytes), (metadata, exception) ->
                    {
                        if (exception == null)
                        {
                            produced.add(id);
                        }
                        else
                        {
                            failures.add(exception);
                        }
                    });
                }
                Thread.sleep(10);
            }
            producer.flush();
        }
        catch (final Throwable ex)
        {
            failures.add(ex);
        }
    }

    /** One consumer slot: online and away at random until the churn ends, then online until the test is finished. */
    private void slot(final RunningBroker broker, final int slot, final long churnEnd)
    {
        final Random random = new Random(4242L + slot);
        try
        {
            while (System.currentTimeMillis() < churnEnd && failures.isEmpty())
            {
                runConsumer(broker, slot, System.currentTimeMillis() + 1_000 + random.nextInt(6_000));
                final long away = Math.min(random.nextInt(2_500), Math.max(0, churnEnd - System.currentTimeMillis()));
                Thread.sleep(away);
            }
            runConsumer(broker, slot, Long.MAX_VALUE);
        }
        catch (final Throwable ex)
        {
            failures.add(new AssertionError("slot " + slot, ex));
        }
    }

    private void runConsumer(final RunningBroker broker, final int slot, final long until)
    {
        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "slot-" + slot + "-" + sessions.incrementAndGet());
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000);
        config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        config.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 30_000);
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 200);
        config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, slot < 2 ? CooperativeStickyAssignor.class.getName()
            : RangeAssignor.class.getName() + "," + CooperativeStickyAssignor.class.getName());
        if (slot == 3)
        {
            config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "churner-3");
        }
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(config))
        {
            consumer.subscribe(List.of(TOPIC), new ConsumerRebalanceListener()
            {
                @Override
                public void onPartitionsRevoked(final Collection<TopicPartition> revoked)
                {
                    // everything returned by poll has been processed: commit it before the partitions move
                    commit(consumer);
                }

                @Override
                public void onPartitionsAssigned(final Collection<TopicPartition> assigned)
                {
                    assignments.incrementAndGet();
                }
            });
            while (System.currentTimeMillis() < until && !finished && failures.isEmpty())
            {
                final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                for (final ConsumerRecord<byte[], byte[]> r : records)
                {
                    processed.add(ByteBuffer.wrap(r.value()).getLong());
                    processedWithRepeats.incrementAndGet();
                }
                if (!records.isEmpty())
                {
                    commit(consumer);
                }
            }
            commit(consumer);
        }
    }

    /** commitSync of what was processed; refused during a rebalance, which at-least-once tolerates (it is read again). */
    private void commit(final KafkaConsumer<byte[], byte[]> consumer)
    {
        try
        {
            consumer.commitSync();
        }
        catch (final CommitFailedException | RebalanceInProgressException ex)
        {
            failedCommits.incrementAndGet();
        }
    }
}
