package io.ferrite.broker.e2e;

import io.ferrite.broker.StartupException;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.CountersFile;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters file's making and unmapping by a broker: written whole at the start (no hole for a store to fault
 * on when the disk is full), a start that cannot make it stopped with one clear line, as is one of more network
 * threads than the file holds, and the mapping gone at the broker's close.
 */
class CountersFileLifecycleTest
{
    @TempDir
    Path dir;

    @Test
    void theFileIsWrittenWholeAtTheStartNotLeftSparse() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final Path file = dir.resolve(CountersFile.NAME);
            final long length = CountersFile.length(BrokerCounters.CAPACITY);
            assertEquals(length, Files.size(file));
            // what the file system gave the file: every block of it, so no later store needs one
            final String[] blocks = run("stat", "--format=%b %B", file.toString()).trim().split(" ");
            final long allocated = Long.parseLong(blocks[0]) * Long.parseLong(blocks[1]);
            assertTrue(allocated >= length, "allocated " + allocated + " of " + length + " bytes");
        }
    }

    @Test
    void aCountersFileThatCannotBeMadeLeavesTheCountersInMemoryAndTheBrokerServing() throws Exception
    {
        // a non-empty directory where the file goes: it cannot be replaced (as a full disk cannot hold it: a broker
        // starts and serves on a full disk, DiskFullBrokerTest)
        Files.createDirectories(dir.resolve(CountersFile.NAME).resolve("in-the-way"));
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            assertNull(broker.broker.counters().file(), "no counters file");
            assertTrue(Files.isDirectory(dir.resolve(CountersFile.NAME).resolve("in-the-way")), "what was in the way kept");
            try (org.apache.kafka.clients.admin.Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("served", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                assertEquals(0, producer.send(new ProducerRecord<>("served", 0, null, new byte[] {1})).get().offset());
            }
        }
    }

    @Test
    void moreNetworkThreadsThanTheFileHoldsStopTheStartWithOneLine() throws Exception
    {
        final int max = BrokerCounters.maxNetworkThreads();
        final StartupException failed = assertThrows(StartupException.class, () -> new RunningBroker(dir,
            Map.of(BrokerConfig.NUM_NETWORK_THREADS, Integer.toString(max + 1))));
        assertEquals(BrokerConfig.NUM_NETWORK_THREADS + "=" + (max + 1) + ": the counters file holds the counters of " + max
            + " network threads at most", failed.getMessage());
        // and the most it holds do fit, with the (others) topic's set
        final BrokerCounters counters = BrokerCounters.create(Files.createDirectories(dir.resolve("most")), max);
        try
        {
            assertEquals(max - 1, counters.network(max - 1).thread());
        }
        finally
        {
            counters.close();
        }
    }

    @Test
    void theBrokerUnmapsItsCountersFileAtClose() throws Exception
    {
        final Path file = dir.resolve(CountersFile.NAME).toAbsolutePath();
        final RunningBroker broker = new RunningBroker(dir, Map.of());
        try
        {
            assertTrue(mapped(file), "mapped while the broker runs");
        }
        finally
        {
            broker.close();
        }
        assertFalse(mapped(file), "unmapped by the close, not left to the GC");
    }

    /** Whether this process maps {@code file} (Linux's /proc/self/maps). */
    private static boolean mapped(final Path file) throws IOException
    {
        final List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"), StandardCharsets.UTF_8);
        return maps.stream().anyMatch(line -> line.endsWith(" " + file));
    }

    private static String run(final String... command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), out);
        return out;
    }
}
