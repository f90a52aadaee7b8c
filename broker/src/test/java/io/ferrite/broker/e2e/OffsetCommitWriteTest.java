package io.ferrite.broker.e2e;

import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.log.LogTailer;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How an OffsetCommit reaches {@code __consumer_offsets}: a failed write answers Kafka's error and
 * changes nothing (not even after a restart), in fsync durability the answer waits for the fsync,
 * and one request is one batch on disk. {@code offsets.topic.num.partitions=1} puts every group on
 * partition 0, the log these tests read and break.
 */
class OffsetCommitWriteTest
{
    private static final String TOPIC = "ledger";
    private static final String GROUP = "auditors";

    @TempDir
    Path dir;

    private static Map<String, String> overrides(final String... more)
    {
        final Map<String, String> o = new HashMap<>(Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "1"));
        for (int i = 0; i < more.length; i += 2)
        {
            o.put(more[i], more[i + 1]);
        }
        return o;
    }

    private static PartitionLog offsetsLog(final RunningBroker broker)
    {
        return broker.broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0].log;
    }

    /** A commit from outside the group (generation -1, as assign() and Admin send it). */
    private static OffsetCommitRequestData commit(final long offset, final String metadata)
    {
        return RawGroups.commitRequest(GROUP, "", null, -1, TOPIC, 0, offset, metadata);
    }

    private static long committed(final RunningBroker broker) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            final OffsetAndMetadata o = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS).get(new TopicPartition(TOPIC, 0));
            return o == null ? -1 : o.offset();
        }
    }

    /**
     * The group's log is closed under the coordinator (a log taken offline): the commit is answered
     * NOT_COORDINATOR (Kafka 4.4 maps the write's NOT_LEADER_OR_FOLLOWER / KAFKA_STORAGE_ERROR so), the
     * committed offset is still the old one, and still after a restart.
     */
    @Test
    void aCommitWhoseWriteFailsAnswersTheErrorAndKeepsTheOldOffset() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides()))
        {
            try (Admin admin = broker.admin())
            {
                Members.createTopic(admin, TOPIC, 1);
            }
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit(5, "first")), "first commit");
                offsetsLog(broker).close();
                assertError(Errors.NOT_COORDINATOR, RawGroups.commitError(raw, COMMIT_V, commit(10, "lost")),
                    "a commit whose append to a closed log failed");
            }
            assertEquals(5, committed(broker), "the failed commit changed nothing");
            broker.restart();
            assertEquals(5, committed(broker), "after a restart the old committed offset is still the committed one");
        }
    }

    /**
     * The batch is larger than the offsets topic's max.message.bytes (from the broker's
     * message.max.bytes): Kafka 4.4 answers UNKNOWN_SERVER_ERROR for a write refused as too large.
     */
    @Test
    void aCommitTooLargeForTheOffsetsLogAnswersUnknownServerErrorAndChangesNothing() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides("message.max.bytes", "1000")))
        {
            try (Admin admin = broker.admin())
            {
                Members.createTopic(admin, TOPIC, 1);
            }
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit(5, "")), "first commit");
                assertError(Errors.UNKNOWN_SERVER_ERROR, RawGroups.commitError(raw, COMMIT_V, commit(10, "m".repeat(2000))),
                    "a commit whose batch is over max.message.bytes of " + GroupCoordinator.OFFSETS_TOPIC);
            }
            assertEquals(5, committed(broker), "the refused commit changed nothing");
            broker.restart();
            assertEquals(5, committed(broker), "nor after a restart");
        }
    }

    /**
     * fsync durability: while the test holds the offsets log's flush back, the commit is appended but
     * not answered; once the fsync may run the answer comes, with the durable offset past the commit.
     * "Not answered" is observed after a barrier, not after a sleep: the broker has one network thread,
     * which handles the commit (append included) before a later ApiVersions on a second connection; once
     * that ApiVersions is answered, an answer written while handling the commit would already be readable.
     */
    @Test
    void inFsyncDurabilityTheCommitIsAnsweredOnlyAfterTheFsync() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides("ferrite.log.durability", "fsync", "num.network.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                Members.createTopic(admin, TOPIC, 1);
            }
            final int port = broker.broker.address().getPort();
            try (RawClient barrier = new RawClient(port); Socket committer = new Socket("127.0.0.1", port))
            {
                committer.setSoTimeout(20_000);
                assertError(Errors.NONE, commitOn(committer, 1, commit(5, "")), "first commit (creates the offsets topic)");
                final PartitionLog log = offsetsLog(broker);
                assertEquals(GroupCoordinator.OFFSETS_TOPIC, log.topic());
                assertTrue(log.config().fsyncDurability, "the offsets log is in fsync durability");
                final long commitOffset;
                synchronized (FlushLock.of(log)) // no fsync of this log completes while held
                {
                    commitOffset = log.logEndOffset();
                    committer.getOutputStream().write(RawClient.frame(ApiKeys.OFFSET_COMMIT, COMMIT_V, commit(10, ""), 2).array());
                    await(() -> log.logEndOffset() > commitOffset, Duration.ofSeconds(20), "the commit appended");
                    barrier.exchange(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData()
                        .setClientSoftwareName("barrier").setClientSoftwareVersion("1"));
                    assertTrue(log.durableOffset() <= commitOffset, "the fsync is held back");
                    assertEquals(0, committer.getInputStream().available(), "the commit was answered before the fsync covered it");
                }
                assertError(Errors.NONE, readCommitResponse(committer, 2), "the commit, once the fsync may run");
                assertTrue(log.durableOffset() > commitOffset, "answered after the durable offset passed the commit: "
                    + log.durableOffset() + " > " + commitOffset);
            }
            assertEquals(10, committed(broker), "committed");
        }
    }

    /** One OffsetCommit of three partitions is one batch of three records in __consumer_offsets. */
    @Test
    void oneCommitRequestIsOneBatchOnDisk() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides()))
        {
            try (Admin admin = broker.admin())
            {
                Members.createTopic(admin, TOPIC, 3);
            }
            final Map<String, Object> config = Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP, ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(config))
            {
                final List<TopicPartition> partitions = Members.partitions(TOPIC, 3);
                consumer.assign(partitions);
                consumer.commitSync(Map.of(partitions.get(0), new OffsetAndMetadata(1))); // creates the offsets topic
                final PartitionLog log = offsetsLog(broker);
                final long before = log.logEndOffset();
                final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (final TopicPartition tp : partitions)
                {
                    offsets.put(tp, new OffsetAndMetadata(10 + tp.partition(), "m" + tp.partition()));
                }
                consumer.commitSync(offsets);
                assertEquals(offsets, consumer.committed(new HashSet<>(partitions)), "committed");

                final LogTailer tailer = new LogTailer(log, before);
                final RecordBatch batch = new RecordBatch();
                int batches = 0;
                int records = 0;
                while (tailer.next(log.logEndOffset(), batch))
                {
                    batches++;
                    records += batch.recordCount();
                }
                assertEquals(3, records, "one record per partition committed");
                assertEquals(1, batches, "batches written for one OffsetCommit request");
            }
        }
    }

    private static short commitOn(final Socket socket, final int correlationId, final OffsetCommitRequestData request) throws IOException
    {
        socket.getOutputStream().write(RawClient.frame(ApiKeys.OFFSET_COMMIT, COMMIT_V, request, correlationId).array());
        return readCommitResponse(socket, correlationId);
    }

    private static short readCommitResponse(final Socket socket, final int correlationId) throws IOException
    {
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        final ByteBuffer buffer = ByteBuffer.wrap(bytes);
        assertEquals(correlationId, ResponseHeader.parse(buffer, ApiKeys.OFFSET_COMMIT.responseHeaderVersion(COMMIT_V)).correlationId());
        final OffsetCommitResponseData response = new OffsetCommitResponseData(new ByteBufferAccessor(buffer), COMMIT_V);
        return response.topics().get(0).partitions().get(0).errorCode();
    }
}
