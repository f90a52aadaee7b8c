package io.ferrite.log.epoch;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.ferrite.log.epoch.LeaderEpochCache.UNDEFINED_EPOCH;
import static io.ferrite.log.epoch.LeaderEpochCache.UNDEFINED_EPOCH_OFFSET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LeaderEpochCache} against Kafka 4.4's own {@code LeaderEpochFileCache} (called, not copied):
 * the same operations on both, the same entries and the same {@code endOffsetFor} answers after each.
 */
class LeaderEpochCacheTest
{
    @TempDir
    Path dir;

    private KafkaScheduler scheduler;
    private final LeaderEpochCache.EpochOffset answer = new LeaderEpochCache.EpochOffset();

    @BeforeEach
    void start()
    {
        scheduler = new KafkaScheduler(1);
        scheduler.startup();
    }

    @AfterEach
    void stop() throws InterruptedException
    {
        scheduler.shutdown();
    }

    private LeaderEpochFileCache kafkaCache(final String name) throws IOException
    {
        return new LeaderEpochFileCache(new TopicPartition("t", 0),
            new LeaderEpochCheckpointFile(dir.resolve(name).toFile(), new LogDirFailureChannel(1)), scheduler);
    }

    @Test
    void theAnswersOfKafkasExamples()
    {
        final LeaderEpochCache cache = new LeaderEpochCache();
        assertAnswer(cache, 0, 10, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET); // empty
        assertTrue(cache.assign(2, 6));
        assertTrue(cache.assign(5, 11));
        assertTrue(cache.assign(8, 20));
        assertFalse(cache.assign(8, 25), "the same epoch keeps its start");
        assertEquals(8, cache.latestEpoch());
        assertAnswer(cache, UNDEFINED_EPOCH, 30, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        assertAnswer(cache, 8, 30, 8, 30);          // the latest: the log end
        assertAnswer(cache, 9, 30, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET); // above the latest
        assertAnswer(cache, 5, 30, 5, 20);          // ends where the next starts
        assertAnswer(cache, 6, 30, 5, 20);          // between entries: the next lower epoch
        assertAnswer(cache, 1, 30, 1, 6);           // below the first: the asked epoch, the first start
        assertTrue(cache.truncateFromEnd(20));
        assertEquals(5, cache.latestEpoch());
        assertTrue(cache.truncateFromStart(8));
        assertArrayEquals(new long[][] {{2, 8}, {5, 11}}, cache.snapshot());
        assertTrue(cache.assign(3, 9), "a lower epoch removes the conflicting entries, as Kafka's");
        assertArrayEquals(new long[][] {{2, 8}, {3, 9}}, cache.snapshot());
        assertThrows(IllegalArgumentException.class, () -> cache.assign(-1, 3));
        assertTrue(cache.clear());
        assertEquals(UNDEFINED_EPOCH, cache.latestEpoch());
    }

    @Test
    void randomOperationsAgreeWithKafkasCache() throws IOException
    {
        for (int run = 0; run < 15; run++)
        {
            final long seed = System.nanoTime() + run;
            final Random random = new Random(seed);
            final String why = "seed " + seed + "L";
            final LeaderEpochCache ours = new LeaderEpochCache();
            final LeaderEpochFileCache kafka = kafkaCache("c" + run);
            long logEnd = 0;
            for (int step = 0; step < 200; step++)
            {
                final int latest = Math.max(0, ours.latestEpoch());
                switch (random.nextInt(6))
                {
                    case 0, 1, 2 ->
                    {
                        final int epoch = Math.max(0, latest + random.nextInt(5) - 1);
                        final long start = Math.max(0, logEnd + random.nextInt(20) - 4);
                        logEnd = Math.max(logEnd, start + 1);
                        ours.assign(epoch, start);
                        kafka.assign(epoch, start);
                    }
                    case 3 ->
                    {
                        final long end = Math.max(-1, logEnd - random.nextInt(30));
                        ours.truncateFromEnd(end);
                        kafka.truncateFromEndAsyncFlush(end);
                    }
                    case 4 ->
                    {
                        final long start = random.nextInt((int)Math.max(1, logEnd + 1));
                        ours.truncateFromStart(start);
                        kafka.truncateFromStartAsyncFlush(start);
                    }
                    default ->
                    {
                        if (random.nextInt(10) == 0)
                        {
                            ours.clear();
                            kafka.clear();
                        }
                    }
                }
                assertArrayEquals(entries(kafka), ours.snapshot(), why + " step " + step);
                assertEquals(kafka.latestEpoch().orElse(UNDEFINED_EPOCH), ours.latestEpoch(), why);
                for (int asked = -1; asked <= latest + 3; asked++)
                {
                    final Map.Entry<Integer, Long> theirs = kafka.endOffsetFor(asked, logEnd);
                    ours.endOffsetFor(asked, logEnd, answer);
                    assertEquals(theirs.getKey(), answer.epoch, why + " step " + step + " epoch " + asked);
                    assertEquals(theirs.getValue(), answer.endOffset, why + " step " + step + " epoch " + asked);
                }
            }
        }
    }

    private static long[][] entries(final LeaderEpochFileCache kafka)
    {
        final List<long[]> out = new ArrayList<>();
        for (final EpochEntry e : kafka.epochEntries())
        {
            out.add(new long[] {e.epoch(), e.startOffset()});
        }
        return out.toArray(new long[0][]);
    }

    private void assertAnswer(final LeaderEpochCache cache, final int asked, final long logEnd, final int epoch, final long offset)
    {
        cache.endOffsetFor(asked, logEnd, answer);
        assertEquals(epoch, answer.epoch, "epoch asked " + asked);
        assertEquals(offset, answer.endOffset, "epoch asked " + asked);
    }
}
