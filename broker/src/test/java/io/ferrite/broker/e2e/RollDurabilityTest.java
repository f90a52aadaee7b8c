package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * In {@code ferrite.durability=fsync} an acks=all answer waits for the fsync of the batch; when the
 * batch is the first of a segment a roll just made, that includes the new file's name: the
 * partition directory is fsynced before the answer (Kafka's flush fsyncs the directory when it
 * covers a new segment), else a power loss can take the segment file, and every acknowledged record
 * in it, with its directory entry. The child server runs with the LD_PRELOAD shim recording every
 * successful fsync (see {@link CreationDurabilityTest}); the test sends one record at a time and,
 * after each answer that came with a new segment on disk, checks the directory's fsync before it.
 */
class RollDurabilityTest
{
    @TempDir
    Path dir;

    @Test
    void aNewSegmentsNameIsDurableBeforeTheRecordsInItAreAcknowledged() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path fsyncs = dir.resolve("fsyncs.txt");
        final ServerCommand.Running server = ServerCommand.start(dir,
            Map.of("LD_PRELOAD", FsyncShim.compile(dir).toString(), "FERRITE_FSYNC_LOG", fsyncs.toString()),
            "--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0");
        final String bootstrap = "127.0.0.1:" + server.port();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
            KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1 << 20),
                new ByteArraySerializer(), new ByteArraySerializer()))
        {
            admin.createTopics(List.of(new NewTopic("ledger", 1, (short)1).configs(
                Map.of("ferrite.durability", "fsync", "segment.bytes", "1048576")))).all().get(20, TimeUnit.SECONDS);
            final Path partition = data.resolve("ledger-0");
            final byte[] value = new byte[200 * 1024]; // a roll every five or six records
            int rolls = 0;
            for (int i = 0; i < 20; i++)
            {
                final long before = segments(partition);
                Files.write(fsyncs, new byte[0]);
                producer.send(new ProducerRecord<>("ledger", 0, null, value)).get(20, TimeUnit.SECONDS);
                Files.writeString(fsyncs, "answered\n", StandardOpenOption.APPEND);
                if (segments(partition) > before)
                {
                    rolls++;
                    final List<String> lines = Files.readAllLines(fsyncs);
                    final List<String> made = lines.subList(0, lines.indexOf("answered"));
                    assertTrue(made.contains(partition.toString()), "record " + i + " landed in a new segment; the partition directory " +
                        "was not fsynced before its answer; fsyncs made: " + made);
                }
            }
            assertTrue(rolls >= 2, "rolls seen: " + rolls);
        }
        finally
        {
            server.stop();
        }
    }

    private static long segments(final Path partition) throws java.io.IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            return files.filter(f -> f.getFileName().toString().endsWith(".log")).count();
        }
    }
}
