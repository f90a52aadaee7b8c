package io.ferrite.broker.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka 4.4's DumpLogSegments (kafka-tools, in a child JVM) on the files the broker wrote for one
 * transactional producer's commit, abort and commit: the partition's .log prints the COMMIT and ABORT
 * control records with the coordinator epoch the partition's DescribeProducers shows, its .txnindex
 * the aborted transaction, its producer .snapshot (written at the broker's close) the producer;
 * {@code __transaction_state} with --transaction-log-decoder prints each of the coordinator's records
 * as Kafka's generated JSON converters read them: the transactional id, producer id and epoch,
 * timeout, state and partitions of each step (Empty, then Ongoing, Prepare*, Complete* per transaction).
 * Run with each transaction version: kafka-clients 4.4 speak version 2 (each EndTxn bumps the producer
 * epoch, the marker is written at the bumped epoch and the next transaction's sequences start again at
 * 0), librdkafka (confluent-kafka's {@code dump_steps.py}) version 1 (one epoch, one run of sequences).
 * What is asserted is what Kafka 4.4 itself writes and DumpLogSegments prints for the same steps with
 * the same client (checked against a Kafka 4.4 broker, whose default is transaction version 2): the same
 * batch and record lines, index entry, snapshot entry and coordinator records but for the timestamps.
 */
class DumpTransactionFilesTest
{
    private static final String TOPIC = "dumped";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final String TXN_ID = "dump-tx";

    @TempDir
    Path dir;

    /** Runs DumpLogSegments with {@code args} in a child JVM on this test's class path; returns what it printed. */
    private static String dump(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.DumpLogSegments"));
        command.addAll(List.of(args));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(0, p.exitValue(), output);
        return output;
    }

    private static Path only(final Path partition, final String suffix) throws IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            final List<Path> found = files.filter(f -> f.getFileName().toString().endsWith(suffix)).sorted().toList();
            assertEquals(1, found.size(), suffix + " files: " + found);
            return found.get(0);
        }
    }

    /** The lines of {@code printed} that start with {@code prefix}. */
    private static List<String> lines(final String printed, final String prefix)
    {
        return printed.lines().filter(l -> l.startsWith(prefix)).toList();
    }

    @Test
    void dumpLogSegmentsReadsTheFilesOfTransactionVersion2() throws Exception
    {
        dumpLogSegmentsReadsThePartitionsAndTheCoordinatorsFiles(true);
    }

    @Test
    void dumpLogSegmentsReadsTheFilesOfTransactionVersion1() throws Exception
    {
        dumpLogSegmentsReadsThePartitionsAndTheCoordinatorsFiles(false);
    }

    /** Commits [a1, a2], aborts [b1], commits [c1] with kafka-clients (transaction version 2) or librdkafka (1); dumps the files. */
    private void dumpLogSegmentsReadsThePartitionsAndTheCoordinatorsFiles(final boolean version2) throws Exception
    {
        final long pid;
        final int coordinatorEpoch;
        final long lastTimestamp;
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS, "1"));
            Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            if (!version2)
            {
                final String out = ChildProcess.run(null, null, 120, "apt-get install python3-confluent-kafka", "/usr/bin/python3",
                    Path.of(DumpTransactionFilesTest.class.getResource("/confluent-kafka/dump_steps.py").toURI()).toString(),
                    broker.bootstrap(), TOPIC, TXN_ID);
                assertTrue(out.lines().anyMatch(l -> l.equals("done")), out);
            }
            else
            {
                try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TXN_ID)))
                {
                    producer.initTransactions();
                    for (final List<String> txn : List.of(List.of("a1", "a2"), List.of("b1"), List.of("c1")))
                    {
                        producer.beginTransaction();
                        for (final String value : txn)
                        {
                            producer.send(new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8))).get();
                        }
                        if (txn.get(0).startsWith("b"))
                        {
                            producer.abortTransaction();
                        }
                        else
                        {
                            producer.commitTransaction();
                        }
                    }
                }
            }
            // the last markers and CompleteCommit follow EndTxn's answer: wait for both
            await(() -> admin.listOffsets(Map.of(TP, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(TP).get().offset() == 7, Duration.ofSeconds(20), "the last stable offset after the last marker");
            await(() -> admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get().state() == TransactionState.COMPLETE_COMMIT,
                Duration.ofSeconds(20), "CompleteCommit");
            final ProducerState state = admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers().get(0);
            pid = state.producerId();
            coordinatorEpoch = state.coordinatorEpoch().orElseThrow();
            lastTimestamp = state.lastTimestamp();
            // version 2: the last marker's bumped epoch leaves the producer no batch, so no last sequence
            assertEquals(version2 ? List.of(3, -1) : List.of(0, 3), List.of((int)state.producerEpoch(), state.lastSequence()),
                state.toString());
        }

        final Path partition = dir.resolve(TOPIC + "-0");
        final String printed = dump("--files", only(partition, ".log") + "," + only(partition, ".txnindex") + ","
            + only(partition, ".snapshot"), "--deep-iteration", "--print-data-log");
        final List<String> batches = lines(printed, "baseOffset: ");
        assertEquals(7, batches.size(), printed);
        for (int offset = 0; offset < 7; offset++)
        {
            final boolean marker = offset == 2 || offset == 4 || offset == 6;
            // version 2: each transaction's sequences start at 0 at its epoch; each marker is at the epoch its EndTxn bumped to
            final int sequence = marker ? -1 : offset < 2 ? offset : version2 ? 0 : offset == 3 ? 2 : 3;
            final int epoch = version2 ? offset / 2 : 0;
            assertTrue(batches.get(offset).startsWith("baseOffset: " + offset + " lastOffset: " + offset + " count: 1 baseSequence: " + sequence
                + " lastSequence: " + sequence + " producerId: " + pid + " producerEpoch: " + epoch + " "), batches.get(offset));
            assertTrue(batches.get(offset).contains(" isTransactional: true isControl: " + marker + " "), batches.get(offset));
            assertTrue(batches.get(offset).contains(" compresscodec: none ") && batches.get(offset).contains(" isvalid: true"), batches.get(offset));
        }
        final List<String> records = lines(printed, "| offset: ");
        assertEquals(7, records.size(), printed);
        final String[] ends = {" payload: a1", " payload: a2", " endTxnMarker: COMMIT coordinatorEpoch: " + coordinatorEpoch, " payload: b1",
            " endTxnMarker: ABORT coordinatorEpoch: " + coordinatorEpoch, " payload: c1", " endTxnMarker: COMMIT coordinatorEpoch: " + coordinatorEpoch};
        for (int offset = 0; offset < 7; offset++)
        {
            assertTrue(records.get(offset).startsWith("| offset: " + offset + " CreateTime: "), records.get(offset));
            assertTrue(records.get(offset).endsWith(ends[offset]), records.get(offset) + " ends with " + ends[offset]);
            if (ends[offset].contains("endTxnMarker"))
            {
                assertTrue(records.get(offset).contains(" keySize: 4 valueSize: 6 sequence: -1 headerKeys: []"), records.get(offset));
            }
        }
        assertEquals(List.of("version: 0 producerId: " + pid + " firstOffset: 3 lastOffset: 4 lastStableOffset: 5"),
            lines(printed, "version: "), "the aborted transaction: " + printed);
        // as Kafka 4.4's: the last timestamp is the last marker's; the batch metadata the last data batch's, none at
        // version 2 (the marker's bumped epoch left the producer no batch)
        final String lastMarkerTime = records.get(6).split(" ")[4];
        assertEquals(String.valueOf(lastTimestamp), lastMarkerTime, records.get(6));
        assertEquals(List.of("producerId: " + pid + " producerEpoch: " + (version2 ? 3 : 0) + " coordinatorEpoch: " + coordinatorEpoch
            + " currentTxnFirstOffset: OptionalLong.empty lastTimestamp: " + lastTimestamp
            + (version2 ? "" : " firstSequence: 3 lastSequence: 3 lastOffset: 5 offsetDelta: 0 timestamp: " + lastTimestamp)),
            lines(printed, "producerId: "), "the producer snapshot: " + printed);
        assertTrue(printed.lines().noneMatch(l -> l.contains("invalid bytes") || l.contains("Exception")), printed);

        final String decoded = dump("--files", only(dir.resolve("__transaction_state-0"), ".log").toString(), "--transaction-log-decoder");
        // one uncompressed, non-transactional record per batch, as Kafka's coordinator writes them
        final List<String> txnBatches = lines(decoded, "baseOffset: ");
        assertEquals(10, txnBatches.size(), decoded);
        for (int offset = 0; offset < txnBatches.size(); offset++)
        {
            assertTrue(txnBatches.get(offset).startsWith("baseOffset: " + offset + " lastOffset: " + offset + " count: 1 baseSequence: -1 "
                + "lastSequence: -1 producerId: -1 producerEpoch: -1 "), txnBatches.get(offset));
            assertTrue(txnBatches.get(offset).contains(" isTransactional: false isControl: false "), txnBatches.get(offset));
            assertTrue(txnBatches.get(offset).contains(" compresscodec: none ") && txnBatches.get(offset).contains(" isvalid: true"),
                txnBatches.get(offset));
        }
        final List<String> steps = new ArrayList<>();
        final ObjectMapper json = new ObjectMapper();
        long start = -1;
        for (final String line : lines(decoded, "| offset: "))
        {
            final int key = line.indexOf(" key: ");
            final int payload = line.indexOf(" payload: ");
            assertTrue(key > 0 && payload > key, line);
            assertEquals("{\"type\":\"0\",\"data\":{\"transactionalId\":\"" + TXN_ID + "\"}}", line.substring(key + 6, payload), line);
            final JsonNode value = json.readTree(line.substring(payload + 10));
            final JsonNode data = value.get("data");
            final String status = data.get("transactionStatus").asText();
            // the fields Kafka 4.4 prints, in its order: the tagged clientTransactionVersion once a transaction version 2 client
            // has added a partition (the Empty of InitProducerId has none, nor has a version 1 client's); no nextProducerId
            final List<String> fields = new ArrayList<>(List.of("producerId", "previousProducerId", "producerEpoch", "transactionTimeoutMs",
                "transactionStatus", "transactionPartitions", "transactionLastUpdateTimestampMs", "transactionStartTimestampMs"));
            if (version2 && !status.equals("Empty"))
            {
                fields.add("clientTransactionVersion");
                assertEquals(2, data.get("clientTransactionVersion").asInt(), line);
            }
            final List<String> printedFields = new ArrayList<>();
            data.fieldNames().forEachRemaining(printedFields::add);
            assertEquals(fields, printedFields, line);
            // previousProducerId as Kafka 4.4 writes it for a new transactional id: its producer id
            assertEquals(List.of(pid, pid, 60_000L), List.of(data.get("producerId").asLong(), data.get("previousProducerId").asLong(),
                data.get("transactionTimeoutMs").asLong()), line);
            final long updated = data.get("transactionLastUpdateTimestampMs").asLong();
            if (status.equals("Ongoing"))
            {
                start = updated; // the transaction starts when its first partition is added
            }
            assertEquals(status.equals("Empty") ? -1 : start, data.get("transactionStartTimestampMs").asLong(), line);
            steps.add(value.get("version").asText() + " " + data.get("producerEpoch").asLong() + " " + status + " "
                + data.get("transactionPartitions"));
        }
        final String added = "[{\"topic\":\"" + TOPIC + "\",\"partitionIds\":[0]}]";
        // version 2: each Prepare* is written at the epoch its EndTxn bumped to, the Ongoing after it keeps that epoch
        final int bump = version2 ? 1 : 0;
        assertEquals(List.of("1 0 Empty null",
            "1 0 Ongoing " + added, "1 " + bump + " PrepareCommit " + added, "1 " + bump + " CompleteCommit []",
            "1 " + bump + " Ongoing " + added, "1 " + 2 * bump + " PrepareAbort " + added, "1 " + 2 * bump + " CompleteAbort []",
            "1 " + 2 * bump + " Ongoing " + added, "1 " + 3 * bump + " PrepareCommit " + added, "1 " + 3 * bump + " CompleteCommit []"),
            steps, decoded);
    }
}
