package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static io.ferrite.broker.e2e.RawGroups.commitError;
import static io.ferrite.broker.group.GroupCoordinator.OFFSETS_TOPIC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real fsync that fails (EIO) under a broker in {@code ferrite.log.durability=fsync}: the server
 * runs in a child JVM with an LD_PRELOAD shim (compiled here with gcc) that fails fsync, fdatasync
 * and msync of one partition's files once a trigger file exists. The produce waiting for that fsync
 * gets KAFKA_STORAGE_ERROR instead of hanging until the client gives up, so does every later one
 * to that partition (the kernel may have dropped the pages a failed fsync did not write, so a
 * retried fsync proves nothing), the failure is logged once, another partition keeps serving, and
 * a restart recovers the failed one from what is on disk.
 */
class FsyncFailureTest
{
    /** Longer than any answer needs; shorter than the client's own timeouts, so a hang is told as a hang. */
    private static final long ANSWER_DEADLINE_S = 20;
    private static final String GROUP = "auditors";

    @TempDir
    Path dir;

    @Test
    void aFailedFsyncIsKafkaStorageErrorForThatPartitionAndOthersServeOn() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path trigger = dir.resolve("fail-now");
        final Map<String, String> environment = failingFsyncsUnder(data.resolve("failing-0"), trigger);
        ServerCommand.Running server = start(data, environment);
        try
        {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
            {
                admin.createTopics(List.of(new NewTopic("failing", 1, (short)1), new NewTopic("healthy", 1, (short)1)))
                    .all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> producer = producer(server))
            {
                assertEquals(0, send(producer, "failing").offset(), "fsync works before the trigger");
                assertEquals(0, send(producer, "healthy").offset());

                Files.createFile(trigger);
                assertStorageError(producer.send(new ProducerRecord<>("failing", 0, null, "waits-for-the-failed-fsync")));
                assertStorageError(producer.send(new ProducerRecord<>("failing", 0, null, "after-the-failure")));
                assertEquals(1, send(producer, "healthy").offset(), "the other partition's fsyncs work: it serves on");
            }
            assertLoggedOnce(server, "failing-0");
        }
        finally
        {
            server.stop();
        }

        Files.delete(trigger);
        server = start(data, Map.of());
        try (KafkaProducer<String, String> producer = producer(server))
        {
            send(producer, "failing"); // answered OK: the restart recovered the log from the disk
        }
        finally
        {
            server.stop();
        }
    }

    /**
     * In {@code ferrite.log.durability=flush} (the default) a produce is acknowledged from the page
     * cache, and the fsync that {@code flush.messages=1} asks for comes after the answer (Kafka 4.4
     * flushes inside the append instead, and answers the produce whose flush failed
     * KAFKA_STORAGE_ERROR). The failure still marks the log failed for good, as in fsync durability:
     * produces to it are refused with KAFKA_STORAGE_ERROR from then on (the first refused is the
     * second or third after the trigger, depending on when the group committer's fsync ends), it is
     * logged once, the other partition serves on, and a restart recovers every acknowledged record.
     */
    @Test
    void inFlushDurabilityAFailedFlushMessagesFsyncRefusesLaterAppendsToThatPartition() throws Exception
    {
        flushDurabilityFailure(Map.of("flush.messages", "1"), "v", 1);
    }

    /**
     * Flush durability with no flush settings, as most brokers run: the only fsync of a segment is
     * the background flush after it rolls (1 MiB segments, 100 KiB records: the eleventh after the
     * trigger rolls it), so no produce is refused before that, and every one is from soon after.
     */
    @Test
    void inFlushDurabilityAFailedFsyncOfARolledSegmentRefusesLaterAppendsToThatPartition() throws Exception
    {
        flushDurabilityFailure(Map.of("segment.bytes", "1048576"), "x".repeat(100 * 1024), 11);
    }

    /**
     * One record to {@code failing} before the trigger, then records of {@code value} until one is
     * refused, which must come after at least {@code leastAcknowledged} in all and within 60 s: then
     * the log is failed for good (the next is refused too), the failure logged once, {@code healthy}
     * serves on, and after a restart the log ends just after the acknowledged records (the shim fails
     * the call, not the write: their pages reach the file; a refused record is never written).
     */
    private void flushDurabilityFailure(final Map<String, String> topicConfig, final String value, final int leastAcknowledged)
        throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path trigger = dir.resolve("fail-now");
        ServerCommand.Running server = start(data, failingFsyncsUnder(data.resolve("failing-0"), trigger), "flush");
        int acknowledged = 1;
        try
        {
            try (Admin admin = admin(server))
            {
                admin.createTopics(List.of(new NewTopic("failing", 1, (short)1).configs(topicConfig),
                    new NewTopic("healthy", 1, (short)1))).all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> producer = producer(server))
            {
                assertEquals(0, send(producer, "failing").offset(), "fsync works before the trigger");
                Files.createFile(trigger);
                // bounded by time, not by a count: the fsync that fails comes after the answers, and
                // under load one group-commit round (another log's fsync first) outlasted 200 produces
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!refused(producer, value))
                {
                    acknowledged++;
                    if (System.nanoTime() > deadline)
                    {
                        throw new AssertionError("no produce refused within 60 s, after " + acknowledged + " records:\n" + server.stderr());
                    }
                }
                System.out.println("flush durability " + topicConfig + ": refused after " + acknowledged + " acknowledged records");
                assertTrue(acknowledged >= leastAcknowledged, "refused after " + acknowledged + " acknowledged records");
                awaitLoggedFailure(server, "failing-0");
                assertStorageError(producer.send(new ProducerRecord<>("failing", 0, null, "after-the-failure")));
                assertEquals(0, send(producer, "healthy").offset(), "the other partition serves on");
            }
            assertLoggedOnce(server, "failing-0");
        }
        finally
        {
            server.stop();
        }

        Files.delete(trigger);
        server = start(data, Map.of(), "flush");
        try (KafkaProducer<String, String> producer = producer(server))
        {
            assertEquals(acknowledged, send(producer, "failing").offset(),
                "the restart recovered every acknowledged record from the disk, and no refused one");
        }
        finally
        {
            server.stop();
        }
    }

    /** Sends one record to {@code failing}: false when acknowledged, true when refused with KAFKA_STORAGE_ERROR. */
    private static boolean refused(final KafkaProducer<String, String> producer, final String value) throws Exception
    {
        try
        {
            producer.send(new ProducerRecord<>("failing", 0, null, value)).get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            return false;
        }
        catch (final ExecutionException ex)
        {
            assertInstanceOf(KafkaStorageException.class, ex.getCause());
            return true;
        }
    }

    private static void awaitLoggedFailure(final ServerCommand.Running server, final String partition)
    {
        io.ferrite.testing.Await.await(() -> server.stderr().contains("fsync of " + partition + " failed"),
            java.time.Duration.ofSeconds(ANSWER_DEADLINE_S), "the failed fsync of " + partition + " logged");
    }

    private static void assertLoggedOnce(final ServerCommand.Running server, final String partition) throws Exception
    {
        final long logged = server.stderr().lines().filter(l -> l.contains("fsync of " + partition + " failed")).count();
        assertEquals(1, logged, "the failure is logged once:\n" + server.stderr());
    }

    /**
     * The failed fsync is one of {@code __consumer_offsets}, which the group coordinator writes
     * through its partition's log thread: the commit waiting for that fsync is answered NOT_COORDINATOR
     * (Kafka 4.4's answer to a storage error on the offsets log) as soon as it failed, not
     * COORDINATOR_NOT_AVAILABLE once the 5 s wait for it ran out; a later commit is refused
     * NOT_COORDINATOR without being written. After a restart the committed offset is that of the
     * commit whose fsync failed, not the later refused one: it was appended before the failure was
     * known, and the shim, unlike a disk that loses the write, lets its pages reach the file. An
     * error answer to a commit does not say it was not written, in Kafka either (which recovers the
     * offsets log from what is on disk just so); the client retries it.
     */
    @Test
    void aFailedFsyncOfTheOffsetsLogAnswersCommitsNotCoordinatorAndNeverWritesTheRefusedOne() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path trigger = dir.resolve("fail-now");
        final Map<String, String> environment = failingFsyncsUnder(data.resolve(OFFSETS_TOPIC + "-0"), trigger);
        ServerCommand.Running server = start(data, environment);
        try
        {
            try (Admin admin = admin(server))
            {
                Members.createTopic(admin, "ledger", 1);
            }
            try (RawClient raw = new RawClient(server.port()))
            {
                assertError(Errors.NONE, commitError(raw, COMMIT_V, commit(5)), "a commit before the trigger (creates the offsets topic)");
                Files.createFile(trigger);
                // Both answers come well within the client's 20 s read timeout; the wait for a fsync that never
                // comes would end after 5 s in COORDINATOR_NOT_AVAILABLE, so the code tells which of the two it was.
                assertError(Errors.NOT_COORDINATOR, commitError(raw, COMMIT_V, commit(10)),
                    "the commit whose fsync of " + OFFSETS_TOPIC + "-0 failed");
                assertError(Errors.NOT_COORDINATOR, commitError(raw, COMMIT_V, commit(15)),
                    "a commit after the failure (" + OFFSETS_TOPIC + "-0 takes no appends)");
            }
            // FsyncFailure's own line: each refused write is logged on as well, by the coordinator. The answer can
            // reach the client before the child's stderr line reaches this JVM's reader: wait for the line first.
            final ServerCommand.Running first = server;
            io.ferrite.testing.Await.await(() -> first.stderr().contains("FsyncFailure - fsync of " + OFFSETS_TOPIC + "-0 failed"),
                java.time.Duration.ofSeconds(ANSWER_DEADLINE_S), "the failed fsync of " + OFFSETS_TOPIC + "-0 logged");
            final long logged = server.stderr().lines().filter(l -> l.contains("FsyncFailure - fsync of " + OFFSETS_TOPIC + "-0 failed"))
                .count();
            assertEquals(1, logged, "the failure is logged once:\n" + server.stderr());
        }
        finally
        {
            server.stop();
        }

        Files.delete(trigger);
        server = start(data, Map.of());
        try (Admin admin = admin(server))
        {
            final OffsetAndMetadata committed = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
                .get(ANSWER_DEADLINE_S, TimeUnit.SECONDS).get(new TopicPartition("ledger", 0));
            assertEquals(10, committed == null ? -1 : committed.offset(),
                "after a restart: the commit whose fsync failed reached the file, the one refused after it was never written");
        }
        finally
        {
            server.stop();
        }
    }

    /** A commit from outside the group (generation -1, as assign() and Admin send it). */
    private static OffsetCommitRequestData commit(final long offset)
    {
        return RawGroups.commitRequest(GROUP, "", null, -1, "ledger", 0, offset, "");
    }

    private static Admin admin(final ServerCommand.Running server)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port()));
    }

    private ServerCommand.Running start(final Path data, final Map<String, String> environment) throws Exception
    {
        return start(data, environment, "fsync");
    }

    private ServerCommand.Running start(final Path data, final Map<String, String> environment, final String durability)
        throws Exception
    {
        return ServerCommand.start(dir, environment, "--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0",
            "--override", "ferrite.log.durability=" + durability, "--override", "offsets.topic.num.partitions=1");
    }

    /** The child's environment: the shim fails the fsyncs of files under {@code partitionDir} once {@code trigger} exists. */
    private Map<String, String> failingFsyncsUnder(final Path partitionDir, final Path trigger) throws Exception
    {
        return Map.of("LD_PRELOAD", compileShim().toString(), "FERRITE_FAIL_FSYNC_TRIGGER", trigger.toString(),
            "FERRITE_FAIL_FSYNC_PREFIX", partitionDir + "/");
    }

    private Path compileShim() throws Exception
    {
        return FsyncShim.compile(dir);
    }

    /** acks=all, no retries, no idempotence: the broker's own answer reaches the test. */
    private static KafkaProducer<String, String> producer(final ServerCommand.Running server)
    {
        final Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        p.put(ProducerConfig.RETRIES_CONFIG, 0);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 60_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        return new KafkaProducer<>(p);
    }

    private static RecordMetadata send(final KafkaProducer<String, String> producer, final String topic) throws Exception
    {
        return producer.send(new ProducerRecord<>(topic, 0, null, "v")).get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
    }

    private static void assertStorageError(final Future<RecordMetadata> answer) throws Exception
    {
        try
        {
            final RecordMetadata m = answer.get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            throw new AssertionError("acknowledged at offset " + m.offset() + " although its fsync failed");
        }
        catch (final TimeoutException ex)
        {
            throw new AssertionError("no answer within " + ANSWER_DEADLINE_S + " s: the produce hangs on the failed fsync", ex);
        }
        catch (final ExecutionException ex)
        {
            assertInstanceOf(KafkaStorageException.class, ex.getCause());
        }
    }
}
