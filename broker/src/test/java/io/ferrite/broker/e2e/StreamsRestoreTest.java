package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka Streams 4.4 under {@code processing.guarantee=at_least_once} on the broker: the stateful word count
 * ({@link WordCountApplication}: re-keyed through a repartition topic, counted in a RocksDB store whose changelog
 * topic is compacted) in a child JVM. It counts {@value #FIRST} fed words exactly (each word's updates 1..n), is
 * stopped cleanly (SIGTERM: offsets committed, stores flushed), its state directory is deleted, and it is started
 * again: it restores its store from the changelog, so the counts of {@value #SECOND} more words continue from
 * the first run's — each word's updates over both runs are exactly 1..n, where an empty store would start again
 * at 1 and a store restored short or twice would skip or repeat.
 *
 * <p>A clean stop, not a kill: at_least_once may count again, after a SIGKILL, what was processed since the
 * last commit (StreamsEosCrashTest shows it with {@code -Dferrite.streams.guarantee=at_least_once}).
 * {@code -Dferrite.streams.bootstrap=host:port} runs the test against another broker (Apache Kafka 4.4 from
 * {@code /work/shared/kafka-ref}), {@code -Dferrite.streams.restore.seed} replays the words.
 */
class StreamsRestoreTest extends WordCountTestBase
{
    private static final int FIRST = 600;
    private static final int SECOND = 300;
    /** From a start to RUNNING: a rebalance (the stopped member left the group on its close) and a restore. */
    private static final Duration START = Duration.ofSeconds(90);

    @Test
    void wordCountRestoresItsStoreFromTheChangelogAfterItsStateDirectoryIsDeleted() throws Exception
    {
        final long seed = Long.getLong("ferrite.streams.restore.seed", System.nanoTime());
        final Random random = new Random(seed);
        final String against = startBroker(seed);
        final String application = "word-count-restore" + suffix;
        final String input = "restore-words" + suffix;
        final String output = "restore-word-counts" + suffix;
        System.out.println("against " + against + ", at_least_once, application " + application
            + ", seed " + seed + " (-Dferrite.streams.restore.seed)");
        final Path state = dir.resolve("streams-state");
        final Path logs = Files.createDirectories(Path.of("target", StreamsRestoreTest.class.getSimpleName(), Long.toString(seed)));
        try (Admin admin = admin())
        {
            createTopics(admin, input, output);

            // the first run: FIRST words counted exactly
            wordCount = ForkedWordCount.start(bootstrap, application, input, output, state, "at_least_once", logs.resolve("word-count-0.log"));
            awaitRunning(0);
            final Map<String, Integer> first = feed(input, new Random(random.nextLong()), FIRST, 0);
            assertEquals(List.of(), WordCountOutput.wrong(WordCountOutput.read(bootstrap, output, PARTITIONS, IsolationLevel.READ_UNCOMMITTED,
                first), first), "the first run's count updates of each word are 1..n");

            // a clean stop commits what it processed: the second run has no input to count again
            wordCount.stop();
            // it left the group on its close, answered before its process ended: the second run's rebalance waits
            // for no session to end (a member that did not leave stays until its 6 s session has)
            final var members = admin.describeConsumerGroups(List.of(application)).all().get(20, TimeUnit.SECONDS)
                .get(application).members();
            assertTrue(members.isEmpty(), () -> "the stopped word count left its group: " + members);
            assertEquals(first.values().stream().mapToLong(Integer::longValue).sum(), committedInput(admin, application, input),
                "input records committed by the stopped word count: all it was fed");
            assertChangelogCompacted(admin, application + "-counts-changelog");
            assertTrue(admin.listTopics().names().get(20, TimeUnit.SECONDS).contains(application + "-by-word-repartition"),
                "the repartition topic");
            deleteRecursively(state);
            assertFalse(Files.exists(state), "the state directory deleted");

            // the second run: its store restored from the changelog, SECOND more words continue the counts
            wordCount = ForkedWordCount.start(bootstrap, application, input, output, state, "at_least_once", logs.resolve("word-count-1.log"));
            awaitRunning(1);
            final Map<String, Integer> second = feed(input, new Random(random.nextLong()), SECOND, FIRST);
            final Map<String, Integer> both = new HashMap<>(first);
            second.forEach((word, n) -> both.merge(word, n, Integer::sum));
            System.out.println("fed " + new TreeMap<>(first) + " then " + new TreeMap<>(second));
            assertEquals(List.of(), WordCountOutput.wrong(WordCountOutput.read(bootstrap, output, PARTITIONS, IsolationLevel.READ_UNCOMMITTED,
                both), both), "the count updates of each word over both runs are 1..n (the word count's logs in " + logs + ")");
        }
    }

    /** Feeds {@code count} words (sequence numbers from {@code firstSequence}) and returns how often each was acknowledged. */
    private Map<String, Integer> feed(final String input, final Random random, final int count, final long firstSequence)
        throws InterruptedException
    {
        feeder = new WordFeeder(bootstrap, input, random, WORDS, firstSequence, count); // unpaced: a clean stop, no kill
        await(() -> feeder.acknowledged() >= count, Duration.ofSeconds(60), () -> count + " words fed, " + feeder.acknowledged() + " so far");
        final Map<String, Integer> fed = feeder.stop();
        feeder.close();
        feeder = null;
        return fed;
    }

    private void awaitRunning(final int run)
    {
        await(() ->
        {
            if (wordCount.failed())
            {
                throw new AssertionError("the word count failed by itself in run " + run + " (state " + wordCount.state() + ")");
            }
            return "RUNNING".equals(wordCount.state());
        }, START, () -> "the word count RUNNING in run " + run + " (state " + wordCount.state() + ", log " + wordCount.log() + ")");
    }

    private static void assertChangelogCompacted(final Admin admin, final String changelog) throws Exception
    {
        final ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, changelog);
        assertEquals("compact", admin.describeConfigs(List.of(topic)).all().get(20, TimeUnit.SECONDS).get(topic).get("cleanup.policy").value(),
            "the changelog's cleanup.policy, as Kafka Streams created it");
    }

    private static void deleteRecursively(final Path root) throws IOException
    {
        try (Stream<Path> paths = Files.walk(root))
        {
            for (final Path p : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.delete(p);
            }
        }
    }
}
