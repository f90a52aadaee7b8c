package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import io.ferrite.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * In {@code ferrite.durability=fsync} an acks=all answer waits for the fsync of the batch; when the
 * batch is the first of a segment a roll just made, that includes the new file's name: the
 * partition directory is fsynced before the answer (Kafka's flush fsyncs the directory when it
 * covers a new segment), else a power loss can take the segment file, and every acknowledged record
 * in it, with its directory entry. The child server runs with the LD_PRELOAD shim recording every
 * successful fsync (see {@link CreationDurabilityTest}); the test sends one record at a time and,
 * after each answer that came with a new segment on disk, checks the directory's fsync before it —
 * and its absence for the others (once per roll, not per flush). After a SIGKILL the names a start
 * finds may be in the page cache only: the first answer after it waits for the directory's fsync.
 */
class RollDurabilityTest
{
    @TempDir
    Path dir;
    private Path shim;

    @Test
    void aNewSegmentsNameIsDurableBeforeTheRecordsInItAreAcknowledged() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path fsyncs = dir.resolve("fsyncs.txt");
        ServerCommand.Running server = start(data, fsyncs);
        final Path partition = data.resolve("ledger-0");
        try
        {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
            {
                admin.createTopics(List.of(new NewTopic("ledger", 1, (short)1).configs(
                    Map.of("ferrite.durability", "fsync", "segment.bytes", "1048576")))).all().get(20, TimeUnit.SECONDS);
                TopicsPublished.await(admin, "ledger"); // its files made after the answer: their fsyncs are not what follows
            }
            int rolls = 0;
            try (KafkaProducer<byte[], byte[]> producer = producer(server))
            {
                for (int i = 0; i < 20; i++)
                {
                    final long before = segments(partition);
                    final List<String> made = sendOne(producer, "ledger", fsyncs);
                    if (segments(partition) > before)
                    {
                        rolls++;
                        assertTrue(made.contains(partition.toString()), "record " + i + " landed in a new segment; the partition " +
                            "directory was not fsynced before its answer; fsyncs made: " + made);
                    }
                    else if (made.contains("rename " + partition.resolve("leader-epoch-checkpoint")))
                    {
                        // the first record's epoch: its leader-epoch-checkpoint is written (and its rename made durable
                        // by the directory's fsync) once per epoch, by the flush before the recovery point passes it
                        assertEquals(0, i, "the leader-epoch-checkpoint written again with no new epoch; fsyncs made: " + made);
                    }
                    else
                    {
                        assertFalse(made.contains(partition.toString()), "record " + i + ": no new segment, yet the partition " +
                            "directory was fsynced (once per roll, not per flush); fsyncs made: " + made);
                    }
                }
            }
            assertTrue(rolls >= 2, "rolls seen: " + rolls);

            // a kill: the names a start finds may be in the page cache only (a roll the kill cut short of its flush), so
            // the directory is fsynced again before the first answer after it. A topic whose segment does not roll:
            // the fsync can only come from the start's own knowledge, not from a roll
            final Path steady = data.resolve("steady-0");
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port()));
                KafkaProducer<byte[], byte[]> producer = producer(server))
            {
                admin.createTopics(List.of(new NewTopic("steady", 1, (short)1).configs(Map.of("ferrite.durability", "fsync"))))
                    .all().get(20, TimeUnit.SECONDS);
                TopicsPublished.await(admin, "steady"); // its files made after the answer: their fsyncs are not what follows
                sendOne(producer, "steady", fsyncs);
            }
            server.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            Files.write(fsyncs, new byte[0]);
            server = start(data, fsyncs);
            try (KafkaProducer<byte[], byte[]> producer = producer(server))
            {
                final List<String> made = answered(producer, "steady", fsyncs); // from the kill to the answer
                assertEquals(1, segments(steady));
                assertTrue(made.contains(steady.toString()), "the first answer after an unclean start came before the partition " +
                    "directory's fsync; fsyncs made: " + made);
                assertFalse(sendOne(producer, "steady", fsyncs).contains(steady.toString()), "and only the first");
            }
        }
        finally
        {
            server.stop();
        }
    }

    /**
     * The producer snapshot a roll writes is forced by the roll's background flush before the flush
     * fsyncs the partition directory, the last step of the rolled segment's flush, which makes the
     * snapshot's name durable with the new segment's (Kafka's roll flushes its producer snapshot
     * before the segments): else a power loss could keep the name without the bytes. Default
     * durability, so the rolled flush is the only flush after the roll.
     */
    @Test
    void aRollsProducerSnapshotIsForcedBeforeTheRolledFlushFsyncsThePartitionDirectory() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path fsyncs = dir.resolve("fsyncs.txt");
        final ServerCommand.Running server = start(data, fsyncs);
        final Path partition = data.resolve("rolling-0");
        try
        {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
            {
                admin.createTopics(List.of(new NewTopic("rolling", 1, (short)1).configs(Map.of("segment.bytes", "1048576"))))
                    .all().get(20, TimeUnit.SECONDS);
                TopicsPublished.await(admin, "rolling"); // its files made after the answer: their fsyncs are not what follows
            }
            Files.write(fsyncs, new byte[0]); // the creation's fsyncs
            try (KafkaProducer<byte[], byte[]> producer = producer(server))
            {
                for (int i = 0; i < 20 && segments(partition) < 2; i++)
                {
                    producer.send(new ProducerRecord<>("rolling", 0, null, new byte[200 * 1024])).get(20, TimeUnit.SECONDS);
                }
            }
            assertEquals(2, segments(partition));
            final String snapshot;
            try (Stream<Path> files = Files.list(partition))
            {
                final long base = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".log"))
                    .mapToLong(n -> Long.parseLong(n.substring(0, 20))).max().getAsLong();
                snapshot = partition.resolve(String.format("%020d.snapshot", base)).toString();
            }
            Await.await(() -> Files.readAllLines(fsyncs).contains(partition.toString()), Duration.ofSeconds(20),
                "the rolled flush fsyncs the partition directory");
            final List<String> made = Files.readAllLines(fsyncs);
            final int snapshotAt = made.indexOf(snapshot);
            assertTrue(snapshotAt >= 0 && snapshotAt < made.indexOf(partition.toString()),
                "the roll's snapshot " + snapshot + " forced before the directory; fsyncs made: " + made);
        }
        finally
        {
            server.stop();
        }
    }

    /** A child server on {@code data} whose successful fsyncs are recorded, one path a line, in {@code fsyncs}. */
    private ServerCommand.Running start(final Path data, final Path fsyncs) throws Exception
    {
        if (shim == null)
        {
            shim = FsyncShim.compile(dir);
        }
        return ServerCommand.start(dir, Map.of("LD_PRELOAD", shim.toString(), "FERRITE_FSYNC_LOG", fsyncs.toString()),
            "--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0");
    }

    private static KafkaProducer<byte[], byte[]> producer(final ServerCommand.Running server)
    {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port(),
            ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1 << 20),
            new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Sends one 200 KiB record (a roll every five or six) and gives the fsyncs made from the send to its answer. */
    private static List<String> sendOne(final KafkaProducer<byte[], byte[]> producer, final String topic, final Path fsyncs)
        throws Exception
    {
        Files.write(fsyncs, new byte[0]);
        return answered(producer, topic, fsyncs);
    }

    /** Sends one 200 KiB record and gives the fsyncs recorded up to its answer. */
    private static List<String> answered(final KafkaProducer<byte[], byte[]> producer, final String topic, final Path fsyncs)
        throws Exception
    {
        producer.send(new ProducerRecord<>(topic, 0, null, new byte[200 * 1024])).get(20, TimeUnit.SECONDS);
        Files.writeString(fsyncs, "answered\n", StandardOpenOption.APPEND);
        final List<String> lines = Files.readAllLines(fsyncs);
        return lines.subList(0, lines.indexOf("answered"));
    }

    private static long segments(final Path partition) throws java.io.IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            return files.filter(f -> f.getFileName().toString().endsWith(".log")).count();
        }
    }
}
