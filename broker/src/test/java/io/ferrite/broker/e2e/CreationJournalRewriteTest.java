package io.ferrite.broker.e2e;

import io.ferrite.broker.admin.CreationsHold;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The creation journal rewritten while topics are pending ({@code PendingCreations}: to the pending topics' records
 * alone), then the broker SIGKILLed with topics still pending: the next start makes every topic answered and not
 * deleted, with its id, partitions and configs, and none deleted — before or after a rewrite dropped its records.
 */
class CreationJournalRewriteTest
{
    @TempDir
    Path dir;

    /**
     * A child JVM whose journal is rewritten whenever it has doubled (rewrite size 1 byte, its internal system
     * property) and whose creations are held: four CreateTopics of 25 topics x 2 partitions, a chunk stepped and awaited
     * after each of the first two (the journal is rewritten when a CreateTopics or a chunk leaves topics pending, so before the next request
     * is taken), a DeleteTopics of the oldest topic (made) and of the newest (pending), then SIGKILL
     * ({@link CreationChunksTest#burstThenSigkill}).
     * The rewrite is seen in the killed broker's log.
     */
    @Test
    void aSigkillAfterRewritesWithTopicsPendingLosesNoneAnsweredAndResurrectsNoneDeleted() throws Exception
    {
        final Map<String, String> env = Map.of("JAVA_TOOL_OPTIONS", "-D" + CreationsHold.rewriteProperty() + "=1"
            + " -Dorg.slf4j.simpleLogger.log.io.ferrite.broker.admin.PendingCreations=info");
        final String log = CreationChunksTest.burstThenSigkill(dir, env, "rw-", List.of("rw-0-0", "rw-3-24"));
        assertTrue(log.contains("rewritten with"), "no rewrite of the journal with topics pending:\n" + log);
    }
}
