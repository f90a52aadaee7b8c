package io.ferrite.broker.e2e;

import io.ferrite.broker.topic.Partition;
import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fetch and ListOffsets under read_committed, checked by kafka-clients' own consumer (which filters
 * aborted records with the response's AbortedTransactions and stops at its LastStableOffset) and
 * Admin. The partition's transactional batches and markers are written by its own log thread (a task
 * run there, its single writer), as the transaction coordinator will write them: committed records are
 * read, aborted ones never, and nothing past an open transaction's first offset until it ends, also
 * across segment rolls; read_uncommitted reads every data record.
 */
class ReadCommittedFetchTest
{
    private static final String TOPIC = "trades";
    private static final List<TopicPartition> PARTITION = List.of(new TopicPartition(TOPIC, 0));

    @TempDir
    Path dir;

    private final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(4096);
    private final int[] sequences = new int[8];

    /** Runs {@code work} on the partition's log thread, its single writer, and waits for it; then moves the high watermark to the log end. */
    private static void onWriter(final RunningBroker broker, final Partition partition, final java.util.function.Consumer<PartitionLog> work)
        throws Exception
    {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        broker.broker.executeOnOwner(partition.owner, () ->
        {
            try
            {
                work.accept(partition.log);
                partition.log.highWatermark(partition.log.logEndOffset()); // one node: what is appended is committed
                done.complete(null);
            }
            catch (final Throwable t)
            {
                done.completeExceptionally(t);
            }
        });
        done.get(20, TimeUnit.SECONDS);
    }

    /** A transactional batch of producer {@code pid} (epoch 0) holding {@code values}. */
    private void send(final PartitionLog log, final int pid, final String... values)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(batch, 0).producer(pid, (short)0, sequences[pid])
            .transactional(true);
        for (final String v : values)
        {
            builder.appendRecord(System.currentTimeMillis(), null, v.getBytes(StandardCharsets.UTF_8));
        }
        final int length = builder.build();
        sequences[pid] += values.length;
        final AppendResult result = new AppendResult();
        log.append(batch, 0, length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }

    private static void end(final PartitionLog log, final int pid, final boolean commit)
    {
        final AppendResult result = new AppendResult();
        log.transactions().appendMarker(pid, (short)0, 0, commit, false, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }


    private static long latest(final Admin admin, final IsolationLevel isolation) throws Exception
    {
        final TopicPartition tp = new TopicPartition(TOPIC, 0);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(tp).get().offset();
    }

    @Test
    void readCommittedReadsCommittedRecordsOnlyAndStopsAtAnOpenTransaction() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            // small segments: transactions span rolls, and an abort's index entry is in a later segment than its first batch
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("internal.segment.bytes", "600")))).all().get();
            final Partition partition = broker.broker.topics().topic(TOPIC).partitions[0];
            final long[] openAt = new long[1];
            onWriter(broker, partition, log ->
            {
                send(log, 1, "c1", "c2");
                send(log, 2, "a1");
                send(log, 1, "c3");
                send(log, 2, "a2", "a3");
                end(log, 1, true);
                for (int i = 0; i < 6; i++)
                {
                    send(log, 2, "a" + (4 + i));
                }
                end(log, 2, false);
                send(log, 3, "c4");
                end(log, 3, true);
                openAt[0] = log.logEndOffset();
                send(log, 4, "o1"); // open: nothing at or after it is stable
                send(log, 1, "c5");
                end(log, 1, true);
            });
            assertEquals(true, partition.log.segmentCount() > 2, "rolled");
            assertEquals(List.of("c1", "c2", "c3", "c4"), IsolatedReads.readAll(broker, PARTITION, IsolationLevel.READ_COMMITTED, 4));
            assertEquals(List.of("c1", "c2", "a1", "c3", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "c4", "o1", "c5"),
                IsolatedReads.readAll(broker, PARTITION, IsolationLevel.READ_UNCOMMITTED, 15));
            assertEquals(openAt[0], latest(admin, IsolationLevel.READ_COMMITTED), "read_committed's latest: the last stable offset");
            assertEquals(partition.log.logEndOffset(), latest(admin, IsolationLevel.READ_UNCOMMITTED), "read_uncommitted's: the high watermark");

            onWriter(broker, partition, log -> end(log, 4, true));
            assertEquals(List.of("c1", "c2", "c3", "c4", "o1", "c5"), IsolatedReads.readAll(broker, PARTITION, IsolationLevel.READ_COMMITTED, 6));
            assertEquals(partition.log.logEndOffset(), latest(admin, IsolationLevel.READ_COMMITTED));
        }
    }
}
