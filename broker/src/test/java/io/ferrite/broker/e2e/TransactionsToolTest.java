package io.ferrite.broker.e2e;

import io.ferrite.broker.topic.Partition;
import io.ferrite.log.AppendResult;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.Exit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka 4.4's own kafka-transactions.sh (TransactionsCommand, run in process against the broker) and
 * Admin over DescribeProducers and WriteTxnMarkers: describe-producers shows an open transaction's
 * start offset; a transactional batch written straight into the log by a producer the coordinator
 * does not know hangs the partition's last stable offset, find-hanging lists it once it is older than
 * --max-transaction-timeout, and abort --start-offset ends it — read_committed then reads past it.
 * list and describe show ongoing and completed transactions as Kafka prints them.
 * WriteTxnMarkers over the wire answers each partition with its log's error (the epoch rule of the
 * request's transaction version, the coordinator epoch, unknown partitions).
 */
class TransactionsToolTest
{
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    /** A producer id the coordinator never handed out. */
    private static final long HANGING_PID = 987_654_321L;

    @TempDir
    Path dir;

    /** Thrown by Kafka's Exit (the tool ends every run with it) instead of ending the JVM. */
    private static final class Exited extends RuntimeException
    {
        final int status;

        Exited(final int status, final String message)
        {
            super(message);
            this.status = status;
        }
    }

    /** Runs kafka-transactions.sh with {@code args}; returns what it printed, checked it exited 0. */
    private static String tool(final RunningBroker broker, final String... args) throws Exception
    {
        final List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrap()));
        all.addAll(List.of(args));
        final Class<?> command = Class.forName("org.apache.kafka.tools.TransactionsCommand");
        final Method execute = command.getDeclaredMethod("execute", String[].class, Function.class, PrintStream.class, Time.class);
        execute.setAccessible(true);
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Admin> admins = new ArrayList<>();
        final Function<Object, Admin> admin = ns ->
        {
            final Admin a = broker.admin();
            admins.add(a);
            return a;
        };
        Exit.setExitProcedure((status, message) ->
        {
            throw new Exited(status, message);
        });
        try (PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8))
        {
            execute.invoke(null, all.toArray(new String[0]), admin, out, Time.SYSTEM);
        }
        catch (final InvocationTargetException e)
        {
            if (!(e.getCause() instanceof Exited))
            {
                throw e;
            }
            final Exited exited = (Exited)e.getCause();
            assertEquals(0, exited.status, all + " failed: " + exited.getMessage() + "\n" + printed.toString(StandardCharsets.UTF_8));
        }
        finally
        {
            Exit.resetExitProcedure();
            admins.forEach(Admin::close);
        }
        return printed.toString(StandardCharsets.UTF_8);
    }

    /** The table row of the tool's output that starts with {@code first} (its cells), or an empty list. */
    private static List<String> row(final String printed, final String first)
    {
        for (final String line : printed.split("\n"))
        {
            final String[] cells = line.trim().split("\\s+");
            if (cells[0].equals(first))
            {
                return List.of(cells);
            }
        }
        return List.of();
    }

    /** Writes a transactional batch of {@link #HANGING_PID} stamped {@code ageMs} ago on the partition's log thread; returns its offset. */
    private static long hangingBatch(final RunningBroker broker, final long ageMs) throws Exception
    {
        return transactionalBatch(broker, HANGING_PID, (short)0, ageMs);
    }

    /** Writes a transactional batch of producer {@code pid} at {@code epoch} stamped {@code ageMs} ago on the partition's log thread; returns its offset. */
    private static long transactionalBatch(final RunningBroker broker, final long pid, final short epoch, final long ageMs) throws Exception
    {
        final Partition partition = broker.broker.topics().topic(TOPIC).partition(0);
        final CompletableFuture<Long> offset = new CompletableFuture<>();
        broker.broker.executeOnOwner(partition.owner, () ->
        {
            try
            {
                final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(256);
                final int length = new RecordBatchBuilder().wrap(batch, 0).producer(pid, epoch, 0).transactional(true)
                    .appendRecord(System.currentTimeMillis() - ageMs, null, "hanging".getBytes(StandardCharsets.UTF_8)).build();
                final AppendResult result = new AppendResult();
                final long at = partition.log.logEndOffset();
                partition.log.append(batch, 0, length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                partition.log.highWatermark(partition.log.logEndOffset()); // one node: what is appended is committed
                offset.complete(at);
            }
            catch (final Throwable t)
            {
                offset.completeExceptionally(t);
            }
        });
        return offset.get(20, TimeUnit.SECONDS);
    }

    /** One WriteTxnMarkers of a single marker to {@code partitions} of {@code topic}; returns each partition's error. */
    private static Map<Integer, Errors> markers(final RawClient raw, final short version, final String topic, final List<Integer> partitions,
        final short epoch, final int coordinatorEpoch, final byte transactionVersion) throws Exception
    {
        final WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData().setMarkers(List.of(
            new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(HANGING_PID).setProducerEpoch(epoch).setTransactionResult(false)
                .setCoordinatorEpoch(coordinatorEpoch).setTransactionVersion(transactionVersion)
                .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(topic).setPartitionIndexes(partitions)))));
        final WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData(
            new ByteBufferAccessor(raw.exchange(ApiKeys.WRITE_TXN_MARKERS, version, request)), version);
        assertEquals(1, response.markers().size());
        assertEquals(HANGING_PID, response.markers().get(0).producerId());
        final Map<Integer, Errors> errors = new TreeMap<>();
        response.markers().get(0).topics().forEach(t ->
        {
            assertEquals(topic, t.name());
            t.partitions().forEach(p -> errors.put(p.partitionIndex(), Errors.forCode(p.errorCode())));
        });
        return errors;
    }

    private static long latest(final Admin admin, final IsolationLevel isolation) throws Exception
    {
        return admin.listOffsets(Map.of(TP, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(TP).get().offset();
    }

    private static ProducerRecord<byte[], byte[]> record(final String value)
    {
        return new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void writeTxnMarkersAnswersEachPartitionWithItsLogsError() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            final long open = transactionalBatch(broker, HANGING_PID, (short)3, 0);
            assertEquals(Map.of(0, Errors.UNKNOWN_TOPIC_OR_PARTITION), markers(raw, (short)2, "nope", List.of(0), (short)3, 0, (byte)2));
            assertEquals(Map.of(0, Errors.INVALID_PRODUCER_EPOCH, 5, Errors.UNKNOWN_TOPIC_OR_PARTITION),
                markers(raw, (short)2, TOPIC, List.of(0, 5), (short)3, 0, (byte)2), "transaction version 2: the epoch must be bumped");
            assertEquals(Map.of(0, Errors.INVALID_PRODUCER_EPOCH), markers(raw, (short)1, TOPIC, List.of(0), (short)2, 0, (byte)0),
                "an older epoch");
            assertEquals(open, latest(admin, IsolationLevel.READ_COMMITTED), "refused markers end nothing");

            assertEquals(Map.of(0, Errors.NONE), markers(raw, (short)2, TOPIC, List.of(0), (short)4, 5, (byte)2));
            assertEquals(latest(admin, IsolationLevel.READ_UNCOMMITTED), latest(admin, IsolationLevel.READ_COMMITTED));
            final ProducerState state = admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers().get(0);
            assertEquals(List.of(HANGING_PID, 4L, 5L), List.of(state.producerId(), (long)state.producerEpoch(),
                (long)state.coordinatorEpoch().orElse(-1)), state.toString());
            assertEquals(Map.of(0, Errors.TRANSACTION_COORDINATOR_FENCED), markers(raw, (short)1, TOPIC, List.of(0), (short)4, 3, (byte)0),
                "an older coordinator epoch");
        }
    }

    /**
     * The coordinator epoch of the last marker is the partition's producer state (Kafka's
     * {@code ProducerStateEntry.coordinatorEpoch}), kept across a restart: in the producer snapshot of a clean
     * shutdown, and rebuilt from the marker in the log when recovery has no snapshot (as after a crash) — a stale
     * coordinator's marker is refused either way.
     */
    @Test
    void theMarkersCoordinatorEpochIsKeptAcrossARestart() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            transactionalBatch(broker, HANGING_PID, (short)3, 0);
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertEquals(Map.of(0, Errors.NONE), markers(raw, (short)1, TOPIC, List.of(0), (short)3, 5, (byte)0));
            }
            for (final boolean snapshot : new boolean[] {true, false})
            {
                broker.broker.close();
                if (!snapshot)
                {
                    final Path partition = dir.resolve(TOPIC + "-0");
                    try (var files = Files.list(partition))
                    {
                        for (final Path f : files.filter(f -> f.toString().endsWith(".snapshot")).toList())
                        {
                            Files.delete(f);
                        }
                    }
                    Files.deleteIfExists(dir.resolve(".kafka_cleanshutdown")); // recovery rebuilds from the log
                }
                broker.start();
                try (RawClient raw = new RawClient(broker.broker.address().getPort()))
                {
                    assertEquals(Map.of(0, Errors.TRANSACTION_COORDINATOR_FENCED),
                        markers(raw, (short)1, TOPIC, List.of(0), (short)3, 4, (byte)0),
                        "a marker of an older coordinator epoch after a restart " + (snapshot ? "with" : "without") + " the snapshot");
                    assertEquals(Map.of(0, Errors.NONE), markers(raw, (short)1, TOPIC, List.of(0), (short)3, 5, (byte)0));
                }
            }
        }
    }

    /** A marker of the request: an ABORT of {@code pid} at epoch 0 (transaction version 0) to {@code partitions} of {@code topic}. */
    private static WriteTxnMarkersRequestData.WritableTxnMarker abort(final long pid, final String topic, final Integer... partitions)
    {
        return new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(pid).setProducerEpoch((short)0).setTransactionResult(false)
            .setCoordinatorEpoch(0).setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(topic)
                .setPartitionIndexes(List.of(partitions))));
    }

    /**
     * As Kafka 4.4's (its answer is built from one error map per producer id): one entry per producer id
     * of the request, with every topic and partition of all its markers, each topic and partition once.
     */
    @Test
    void writeTxnMarkersAnswersOneEntryPerProducerId() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            final long other = HANGING_PID + 1;
            final short version = 1;
            final WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData().setMarkers(List.of(abort(HANGING_PID, TOPIC, 0),
                abort(other, TOPIC, 0), abort(HANGING_PID, TOPIC, 1), abort(HANGING_PID, "nope", 0)));
            final WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData(
                new ByteBufferAccessor(raw.exchange(ApiKeys.WRITE_TXN_MARKERS, version, request)), version);

            final Map<Long, Map<String, Map<Integer, Errors>>> answered = new TreeMap<>();
            for (final WriteTxnMarkersResponseData.WritableTxnMarkerResult m : response.markers())
            {
                final Map<String, Map<Integer, Errors>> topics = new TreeMap<>();
                assertEquals(null, answered.put(m.producerId(), topics), "producer id " + m.producerId() + " answered twice: " + response);
                for (final WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult t : m.topics())
                {
                    final Map<Integer, Errors> partitions = new TreeMap<>();
                    assertEquals(null, topics.put(t.name(), partitions), "topic " + t.name() + " answered twice: " + response);
                    t.partitions().forEach(p -> assertEquals(null, partitions.put(p.partitionIndex(), Errors.forCode(p.errorCode())),
                        "partition answered twice: " + response));
                }
            }
            assertEquals(Map.of(
                HANGING_PID, Map.of(TOPIC, Map.of(0, Errors.NONE, 1, Errors.NONE), "nope", Map.of(0, Errors.UNKNOWN_TOPIC_OR_PARTITION)),
                other, Map.of(TOPIC, Map.of(0, Errors.NONE))), answered);
        }
    }

    /** The table rows (cells) of the tool's output below its header line, which must be {@code headers}. */
    private static List<List<String>> table(final String printed, final String... headers)
    {
        final List<String> lines = printed.lines().filter(l -> !l.isBlank()).toList();
        assertEquals(List.of(headers), List.of(lines.get(0).trim().split("\\s+")), printed);
        return lines.subList(1, lines.size()).stream().map(l -> List.of(l.trim().split("\\s+"))).toList();
    }

    /**
     * list: every transactional id the coordinator holds, with the coordinator (this broker), producer id
     * and state as Kafka's TransactionState names it; filtered by id pattern (RE2/J, as Kafka compiles
     * it) and by duration. describe: one transactional id's producer, epoch, state, timeout, start time
     * and partitions (a committed one keeps its start, as in Kafka, and has no partitions).
     */
    @Test
    void listAndDescribeShowOngoingAndCommittedTransactions() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            KafkaProducer<byte[], byte[]> ongoing = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tool-ongoing",
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 45_000));
            KafkaProducer<byte[], byte[]> committed = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tool-committed")))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            final String brokerId = String.valueOf(admin.describeCluster().nodes().get().iterator().next().id());
            committed.initTransactions();
            final long committedBefore = System.currentTimeMillis();
            committed.beginTransaction();
            committed.send(record("committed")).get();
            committed.commitTransaction();
            final long before = System.currentTimeMillis();
            ongoing.initTransactions();
            ongoing.beginTransaction();
            ongoing.send(record("open")).get();
            ongoing.send(new ProducerRecord<>(TOPIC, 1, null, "open".getBytes(StandardCharsets.UTF_8))).get();
            final String ongoingPid = String.valueOf(
                admin.describeTransactions(List.of("tool-ongoing")).description("tool-ongoing").get().producerId());
            final String committedPid = String.valueOf(
                admin.describeTransactions(List.of("tool-committed")).description("tool-committed").get().producerId());
            // Complete* follows EndTxn's answer (the markers first): wait for it
            await(() -> row(tool(broker, "list"), "tool-committed").contains("CompleteCommit"),
                Duration.ofSeconds(20), "tool-committed CompleteCommit in the list");

            final String[] listHeaders = {"TransactionalId", "Coordinator", "ProducerId", "TransactionState"};
            assertEquals(List.of(List.of("tool-committed", brokerId, committedPid, "CompleteCommit"),
                    List.of("tool-ongoing", brokerId, ongoingPid, "Ongoing")),
                table(tool(broker, "list"), listHeaders).stream().sorted((a, b) -> a.get(0).compareTo(b.get(0))).toList());
            assertEquals(List.of(List.of("tool-ongoing", brokerId, ongoingPid, "Ongoing")),
                table(tool(broker, "list", "--transactional-id-pattern", "tool-o.*"), listHeaders));
            assertEquals(List.of(), table(tool(broker, "list", "--duration-filter", "3600000"), listHeaders),
                "no transaction is an hour old");

            final String[] describeHeaders = {"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"};
            final List<List<String>> open = table(tool(broker, "describe", "--transactional-id", "tool-ongoing"), describeHeaders);
            assertEquals(1, open.size(), open.toString());
            assertEquals(List.of(brokerId, "tool-ongoing", ongoingPid, "0", "Ongoing", "45000"), open.get(0).subList(0, 6), open.toString());
            final long start = Long.parseLong(open.get(0).get(6));
            assertTrue(start >= before && start <= System.currentTimeMillis(), "start " + start + " after " + before);
            assertTrue(Long.parseLong(open.get(0).get(7)) >= 0, open.toString());
            assertEquals(List.of(TOPIC + "-0", TOPIC + "-1"), List.of(open.get(0).get(8).split(",")).stream().sorted().toList(),
                open.toString());

            final List<List<String>> done = table(tool(broker, "describe", "--transactional-id", "tool-committed"), describeHeaders);
            // as in Kafka 4.4 (TransactionMetadata.prepareComplete keeps txnStartTimestamp): the last transaction's start, no partitions;
            // epoch 1: kafka-clients 4.4 run transaction version 2, whose commit bumps the epoch (Kafka 4.4 describes the same)
            assertEquals(1, done.size(), done.toString());
            assertEquals(List.of(brokerId, "tool-committed", committedPid, "1", "CompleteCommit", "60000"), done.get(0).subList(0, 6),
                done.toString());
            final long committedStart = Long.parseLong(done.get(0).get(6));
            assertTrue(committedStart >= committedBefore && committedStart <= before, "start " + committedStart + " in ["
                + committedBefore + ", " + before + "]");
            assertEquals(8, done.get(0).size(), "no partitions: " + done);
            ongoing.commitTransaction();
        }
    }

    /**
     * describe of a transaction version 1 commit (librdkafka, through kcat, sends AddPartitionsToTxn itself
     * and ends with EndTxn below v5): the commit leaves the epoch as it was, as in Kafka 4.4.
     */
    @Test
    void describeShowsATransactionVersion1CommitAtItsEpoch() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            final String brokerId = String.valueOf(admin.describeCluster().nodes().get().iterator().next().id());
            ChildProcess.run(null, "k:committed\n", 60, "apt-get install kcat", "kcat", "-b", broker.bootstrap(), "-P", "-t", TOPIC,
                "-p", "0", "-K:", "-X", "transactional.id=tool-kcat");
            await(() -> row(tool(broker, "list"), "tool-kcat").contains("CompleteCommit"), Duration.ofSeconds(20),
                "tool-kcat CompleteCommit in the list");
            final String pid = String.valueOf(admin.describeTransactions(List.of("tool-kcat")).description("tool-kcat").get().producerId());
            final List<List<String>> done = table(tool(broker, "describe", "--transactional-id", "tool-kcat"), "CoordinatorId",
                "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                "TransactionDurationMs", "TopicPartitions");
            assertEquals(1, done.size(), done.toString());
            assertEquals(List.of(brokerId, "tool-kcat", pid, "0", "CompleteCommit", "60000"), done.get(0).subList(0, 6), done.toString());
        }
    }

    @Test
    void describeProducersFindHangingAndAbortEndAHangingTransaction() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tool-tx",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            final int brokerId = admin.describeCluster().nodes().get().iterator().next().id();

            producer.initTransactions();
            producer.beginTransaction();
            producer.send(record("first")).get();
            final List<ProducerState> open = admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers();
            assertEquals(1, open.size(), open.toString());
            final ProducerState state = open.get(0);
            assertEquals(0L, state.currentTransactionStartOffset().orElse(-1), state.toString());
            assertEquals(0, state.lastSequence(), state.toString());
            assertTrue(state.lastTimestamp() > 0, state.toString());
            final List<String> described = row(tool(broker, "describe-producers", "--topic", TOPIC, "--partition", "0"),
                String.valueOf(state.producerId()));
            assertEquals(List.of(String.valueOf(state.producerId()), String.valueOf(state.producerEpoch()), "-1", "0",
                String.valueOf(state.lastTimestamp()), "0"), described);
            producer.commitTransaction();
            // the commit's marker follows the EndTxn answer (Kafka 4.4's order: answered once PrepareCommit is written,
            // the markers sent after), so the partition's open transaction ends shortly after commitTransaction returns
            await(() -> admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers().stream()
                    .noneMatch(p -> p.currentTransactionStartOffset().isPresent()), Duration.ofSeconds(20),
                "the commit's marker written: no open transaction in describe-producers");
            final ProducerState committed = admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers().get(0);
            assertFalse(committed.currentTransactionStartOffset().isPresent(), committed.toString());

            final long hanging = hangingBatch(broker, TimeUnit.MINUTES.toMillis(10));
            producer.beginTransaction();
            producer.send(record("after")).get();
            producer.commitTransaction();
            // as above, this commit's marker follows the answer: the checks after the tool's abort need it written
            await(() -> admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers().stream()
                    .noneMatch(p -> p.producerId() != HANGING_PID && p.currentTransactionStartOffset().isPresent()), Duration.ofSeconds(20),
                "the second commit's marker written: only the hanging transaction open in describe-producers");
            assertEquals(hanging, latest(admin, IsolationLevel.READ_COMMITTED), "the hanging transaction holds the last stable offset");
            assertEquals(List.of("first"), IsolatedReads.readAll(broker, List.of(TP), IsolationLevel.READ_COMMITTED, 1));

            final List<String> found = row(tool(broker, "find-hanging", "--broker-id", String.valueOf(brokerId),
                "--max-transaction-timeout", "1"), TOPIC);
            assertEquals(List.of(TOPIC, "0", String.valueOf(HANGING_PID), "0", "-1", String.valueOf(hanging)), found.subList(0, 6),
                found.toString());
            assertEquals(List.of(), row(tool(broker, "find-hanging", "--broker-id", String.valueOf(brokerId),
                "--max-transaction-timeout", "15"), TOPIC), "younger than 15 minutes: not hanging yet");

            tool(broker, "abort", "--topic", TOPIC, "--partition", "0", "--start-offset", String.valueOf(hanging));
            assertEquals(latest(admin, IsolationLevel.READ_UNCOMMITTED), latest(admin, IsolationLevel.READ_COMMITTED),
                "nothing open any more: the last stable offset is the high watermark");
            assertEquals(List.of("first", "after"), IsolatedReads.readAll(broker, List.of(TP), IsolationLevel.READ_COMMITTED, 2));
            assertEquals(List.of("first", "hanging", "after"), IsolatedReads.readAll(broker, List.of(TP), IsolationLevel.READ_UNCOMMITTED, 3));
            assertEquals(List.of(), row(tool(broker, "find-hanging", "--broker-id", String.valueOf(brokerId),
                "--max-transaction-timeout", "1"), TOPIC));
            for (final ProducerState p : admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers())
            {
                assertFalse(p.currentTransactionStartOffset().isPresent(), p.toString());
                if (p.producerId() == HANGING_PID)
                {
                    assertEquals(0, p.coordinatorEpoch().orElse(-1), "the abort's coordinator epoch: " + p);
                }
            }
        }
    }
}
