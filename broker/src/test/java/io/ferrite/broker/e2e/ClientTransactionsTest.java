package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Transactions of the clients that speak transaction version 1 (they send AddPartitionsToTxn
 * themselves and never read the features), each driven by a script in a child process: KafkaJS 2.x
 * (node; {@code npm ci} from the committed lock file in {@code src/test/resources/kafkajs}) and
 * librdkafka through confluent-kafka (Debian's python3-confluent-kafka). Each script commits two
 * records, aborts one, commits one; a second producer of the same transactional id fences the first
 * in a transaction (its commit fails with the client's fenced error; the transaction is aborted) and
 * commits one; the script writes "end" without a transaction, then reads the partition with
 * its own client's read_committed consumer (the committed records only) and read_uncommitted one
 * (every record). kafka-clients' read_committed consumer then reads what they wrote the same way.
 * Both scripts print exactly these lines against a Kafka 4.4 broker too (checked by hand).
 * (kcat's transactions are in KcatTest.)
 */
class ClientTransactionsTest
{
    private static final String TOPIC = "txn";
    private static final List<String> COMMITTED = List.of("committed-1", "committed-2", "committed-4", "committed-6", "end");
    private static final List<String> ALL = List.of("committed-1", "committed-2", "aborted-3", "committed-4", "zombie-5", "committed-6", "end");
    /** The Debian package's interpreter: python3-confluent-kafka installs into its dist-packages, not a pyenv's or venv's. */
    private static final String PYTHON = "/usr/bin/python3";

    @TempDir
    Path dir;

    /** The folder of a script of src/test/resources as Maven copied it (under target/test-classes). */
    private static Path resources(final String folder) throws Exception
    {
        return Path.of(ClientTransactionsTest.class.getResource("/" + folder).toURI());
    }

    /** Runs {@code command} against a fresh broker and checks what its consumers and kafka-clients' read. */
    private void transactionsOf(final Path workDir, final String fencedError, final String needs, final String... command) throws Exception
    {
        // one consumer joins each KafkaJS group: no reason to wait 3 s for others
        try (RunningBroker broker = new RunningBroker(dir.resolve("data"), Map.of(BrokerConfig.GROUP_INITIAL_REBALANCE_DELAY_MS, "0"));
            Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            final String[] full = new String[command.length + 2];
            System.arraycopy(command, 0, full, 0, command.length);
            full[command.length] = broker.bootstrap();
            full[command.length + 1] = TOPIC;
            final String out = ChildProcess.run(workDir, null, 120, needs, full);
            assertEquals(List.of("{\"zombieCommit\":\"" + fencedError + "\"}"), ChildProcess.linesStartingWith(out, "{\"zombieCommit\""), out);
            assertEquals(List.of(json("readCommitted", COMMITTED)), ChildProcess.linesStartingWith(out, "{\"readCommitted\""), out);
            assertEquals(List.of(json("readUncommitted", ALL)), ChildProcess.linesStartingWith(out, "{\"readUncommitted\""), out);

            final List<TopicPartition> tp = List.of(new TopicPartition(TOPIC, 0));
            assertEquals(COMMITTED, IsolatedReads.readAll(broker, tp, IsolationLevel.READ_COMMITTED, COMMITTED.size()));
            assertEquals(ALL, IsolatedReads.readAll(broker, tp, IsolationLevel.READ_UNCOMMITTED, ALL.size()));
        }
    }

    /** {@code {"name":["v1","v2",...]}} without whitespace. */
    private static String json(final String name, final List<String> values)
    {
        return "{\"" + name + "\":[" + String.join(",", values.stream().map(v -> "\"" + v + "\"").toList()) + "]}";
    }

    @Test
    void kafkaJsCommitsAndAbortsAndItsConsumersReadAtEachIsolationLevel() throws Exception
    {
        final Path kafkajs = resources("kafkajs");
        // the versions and checksums the lock file names, from the npm registry; target/ keeps them with a
        // copy of the lock file they came from, so a changed lock file installs again
        final byte[] lock = Files.readAllBytes(kafkajs.resolve("package-lock.json"));
        final Path installed = kafkajs.resolve("node_modules/.installed-from-package-lock.json");
        if (!Files.exists(installed) || !Arrays.equals(lock, Files.readAllBytes(installed)))
        {
            ChildProcess.run(kafkajs, null, 300, "apt-get install nodejs npm", "npm", "ci", "--no-audit", "--no-fund");
            Files.write(installed, lock);
        }
        // below EndTxn v2 PRODUCER_FENCED is answered as INVALID_PRODUCER_EPOCH, as Kafka 4.4 does
        transactionsOf(kafkajs, "INVALID_PRODUCER_EPOCH", "apt-get install nodejs", "node", "transactions.js");
    }

    @Test
    void confluentKafkaCommitsAndAbortsAndItsConsumersReadAtEachIsolationLevel() throws Exception
    {
        // librdkafka turns the fenced epoch into its fatal _FENCED
        transactionsOf(resources("confluent-kafka"), "_FENCED", "apt-get install python3-confluent-kafka", PYTHON, "transactions.py");
    }
}
