package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.IsolationLevel;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Kafka Streams 4.4 under {@code processing.guarantee=exactly_once_v2} on the broker: a stateful word
 * count ({@link ForkedWordCount}: re-keyed through a repartition topic, counted in a RocksDB store with a
 * changelog topic) in a child JVM, killed with SIGKILL at a random moment of its processing and restarted
 * on the same state directory, round after round, while a producer in this JVM keeps feeding it words (key
 * a unique sequence number, value one of {@value #WORDS} words). Each round kills it once it has committed
 * progress of its own (the group's committed input offsets moved since its start), so the kill falls
 * among open transactions on the repartition, changelog and output topics and a pending offset commit.
 * At the end a read_committed consumer reads the output from its start: for every word the count updates,
 * in offset order, are exactly 1, 2, ..., n where n is how many times the producer had that word
 * acknowledged — no update twice (a transaction replayed after a kill), none missing (a commit lost).
 *
 * <p>The default build runs {@value #DEFAULT_ROUNDS} kills; {@code -Dferrite.streams.crash.rounds=N} more
 * (the {@code long} profile), {@code -Dferrite.streams.crash.seed} replays the words and kill delays (not
 * the timing). For development, {@code -Dferrite.streams.bootstrap=host:port} runs the same test against
 * another broker (Apache Kafka 4.4 from {@code ../shared/kafka-ref}: it passes there), and
 * {@code -Dferrite.streams.guarantee=at_least_once} shows the check failing, on either broker: every word
 * counted too often (what was processed after the last commit before a kill is counted again).
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class StreamsEosCrashTest extends WordCountTestBase
{
    private static final int DEFAULT_ROUNDS = 2;
    /** From a start to committed progress: the dead member's 6 s session, a rebalance, the store restored. */
    private static final Duration PROGRESS = Duration.ofSeconds(90);

    @Test
    void wordCountsAreExactAcrossSigkillsOfTheStreamsApplication() throws Exception
    {
        final CrashRounds crash = CrashRounds.of(StreamsEosCrashTest.class, "streams.crash", DEFAULT_ROUNDS);
        final Random random = crash.random();
        final String guarantee = System.getProperty("ferrite.streams.guarantee", "exactly_once_v2");
        final String against = startBroker(crash.seed());
        final String application = "word-count" + suffix;
        final String input = "words" + suffix;
        final String output = "word-counts" + suffix;
        System.out.println("against " + against + ", " + guarantee + ", application " + application);
        try (Admin admin = admin())
        {
            createTopics(admin, input, output);
            feeder = new WordFeeder(bootstrap, input, new Random(random.nextLong()), WORDS, 0);
            final Path state = dir.resolve("streams-state");
            // the word count's logs outlive the test (the temporary directory does not): target/StreamsEosCrashTest/<seed>/
            final Path logs = Files.createDirectories(
                Path.of("target", StreamsEosCrashTest.class.getSimpleName(), Long.toString(crash.seed())));
            int incarnation = 0;
            wordCount = ForkedWordCount.start(bootstrap, application, input, output, state, guarantee,
                logs.resolve("word-count-" + incarnation + ".log"));
            for (int round = 0; round < crash.rounds(); round++)
            {
                awaitCommittedProgress(admin, application, input, round);
                final long killAfterMs = random.nextInt(1_000);
                Thread.sleep(killAfterMs); // a random point of its processing, not a wait for a state
                final long committed = committedInput(admin, application, input);
                wordCount.kill();
                System.out.println("round " + round + ": killed " + killAfterMs + " ms after committed progress, " + committed
                    + " input records committed then, " + feeder.acknowledged() + " fed");
                incarnation++;
                wordCount = ForkedWordCount.start(bootstrap, application, input, output, state, guarantee,
                    logs.resolve("word-count-" + incarnation + ".log"));
            }
            awaitCommittedProgress(admin, application, input, crash.rounds());
        }
        final Map<String, Integer> fed = feeder.stop();
        System.out.println("fed " + fed.values().stream().mapToInt(Integer::intValue).sum() + " words: " + new TreeMap<>(fed));

        final Map<String, List<Long>> updates = WordCountOutput.read(bootstrap, output, PARTITIONS, IsolationLevel.READ_COMMITTED, fed);
        assertEquals(List.of(), WordCountOutput.wrong(updates, fed), "the committed count updates of each word are 1..n (" + guarantee
            + ", the word count's logs in target/" + StreamsEosCrashTest.class.getSimpleName() + "/" + crash.seed() + ")");
    }

    /**
     * Waits until the running word count has committed input offsets beyond those at its start — it rebalanced,
     * restored its store and committed a transaction of its own — failing at once if it died by itself.
     */
    private void awaitCommittedProgress(final Admin admin, final String application, final String input, final int round) throws Exception
    {
        final long atStart = committedInput(admin, application, input);
        await(() ->
        {
            if (wordCount.failed())
            {
                throw new AssertionError("the word count failed by itself in round " + round + " (state " + wordCount.state()
                    + "): " + tail(wordCount.log()));
            }
            return "RUNNING".equals(wordCount.state()) && committedInput(admin, application, input) > atStart;
        }, PROGRESS, () -> "the word count's committed progress in round " + round + " (state " + wordCount.state()
            + ", log: " + tail(wordCount.log()) + ")");
    }

    private static String tail(final Path log)
    {
        try
        {
            final List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        }
        catch (final IOException ex)
        {
            return "(unreadable: " + ex + ")";
        }
    }
}
