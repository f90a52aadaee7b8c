package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Offsets pending in a transaction version 2 transaction (raw TxnOffsetCommit v5 and EndTxn v5, as
 * kafka-clients 4.4 sends them) meeting the rest of the group coordinator, each as Kafka 4.4's
 * {@code OffsetMetadataManager} answers it: committed offsets survive a restart; OffsetDelete tombstones
 * a partition with only a pending offset (answered NONE) and the transaction's COMMIT then brings
 * nothing back; offset expiry keeps a committed offset whose partition has one pending, and the group
 * while any is pending; OffsetFetch's all-topics form (topics null) with RequireStable answers
 * UNSTABLE_OFFSET_COMMIT for a partition with a pending offset and lists no partition that has only a
 * pending one; OFFSET_METADATA_TOO_LARGE (offset.metadata.max.bytes, string length) is the partition's
 * own, the others are written.
 */
class TxnOffsetsPendingTest
{
    private static final String IN = "orders";
    private static final String GROUP = "pending-group";
    private static final String OFFSETS = "__consumer_offsets";

    @TempDir
    Path dir;

    private static RawTxn.Producer next(final EndTxnResponseData ended)
    {
        assertEquals(Errors.NONE, Errors.forCode(ended.errorCode()));
        return new RawTxn.Producer(ended.producerId(), ended.producerEpoch());
    }

    @Test
    void aVersion2TransactionsOffsetsAreCommittedAndSurviveARestart() throws Exception
    {
        // the second TxnOffsetCommit's add is held until CompleteCommit is written, however long that takes on a
        // loaded machine: by the default 100 ms bound it could be answered CONCURRENT_TRANSACTIONS
        try (RunningBroker broker = new RunningBroker(dir, Map.of("add.partitions.to.txn.retry.backoff.max.ms", "600000"));
             Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(IN, 2, (short)1))).all().get();
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final RawTxn txn = new RawTxn(raw);
                RawTxn.Producer p = txn.initProducerId("v2-restart");
                assertEquals(Errors.NONE, txn.commit((short)5, "v2-restart", p, GROUP, IN, 0, 3));
                p = next(txn.endTxnV5("v2-restart", p, true));
                // the next transaction's implicit add meets the previous one completing: CONCURRENT_TRANSACTIONS at once,
                // as Kafka 4.4, which kafka-clients retries (so does this); then an abort: its offset is dropped
                Errors added = txn.commit((short)5, "v2-restart", p, GROUP, IN, 1, 9);
                final long addDeadline = System.nanoTime() + 20_000_000_000L;
                while (added == Errors.CONCURRENT_TRANSACTIONS && System.nanoTime() - addDeadline < 0)
                {
                    added = txn.commit((short)5, "v2-restart", p, GROUP, IN, 1, 9);
                }
                assertEquals(Errors.NONE, added);
                next(txn.endTxnV5("v2-restart", p, false));
                txn.awaitCommitted(GROUP, IN, 0, 3, "the committed transaction's offset");
                await(() -> txn.fetch(GROUP, IN, 1, true).equals(new RawTxn.Fetched(-1, Errors.NONE)), Duration.ofSeconds(20),
                    "the aborted transaction's offset dropped");
            }
            broker.restart();
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final RawTxn txn = new RawTxn(raw);
                assertEquals(new RawTxn.Fetched(3, Errors.NONE), txn.fetch(GROUP, IN, 0, true), "replayed: the COMMIT's offset");
                assertEquals(new RawTxn.Fetched(-1, Errors.NONE), txn.fetch(GROUP, IN, 1, true), "replayed: the ABORT's dropped");
            }
        }
    }

    @Test
    void offsetDeleteTombstonesAPendingOffsetAndTheCommitThenBringsNothingBack() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 2, (short)1))).all().get();
            admin.alterConsumerGroupOffsets(GROUP, Map.of(new TopicPartition(IN, 1), new OffsetAndMetadata(4))).all().get();
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("deleting");
            assertEquals(Errors.NONE, txn.commit((short)5, "deleting", p, GROUP, IN, 0, 7), "pending, no committed offset");
            final OffsetDeleteResponseData deleted = new OffsetDeleteResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_DELETE,
                (short)0, new OffsetDeleteRequestData().setGroupId(GROUP).setTopics(new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection(
                    List.of(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(IN).setPartitions(List.of(
                        new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0)))).iterator())))), (short)0);
            assertEquals(Errors.NONE, Errors.forCode(deleted.errorCode()));
            assertEquals(Errors.NONE, Errors.forCode(deleted.topics().find(IN).partitions().find(0).errorCode()));
            assertEquals(new RawTxn.Fetched(-1, Errors.NONE), txn.fetch(GROUP, IN, 0, true), "stable: the tombstone dropped it");
            next(txn.endTxnV5("deleting", p, true));
            txn.awaitCommitted(GROUP, IN, 1, 4, "the COMMIT's markers written (the other partition's offset, as before)");
            await(() -> admin.describeTransactions(List.of("deleting")).description("deleting").get().state().toString()
                .equals("CompleteCommit"), Duration.ofSeconds(20), "the transaction complete: its marker on the group's partition applied");
            assertEquals(new RawTxn.Fetched(-1, Errors.NONE), txn.fetch(GROUP, IN, 0, false), "the COMMIT found nothing pending");
            broker.restart();
            try (RawClient again = new RawClient(broker.broker.address().getPort()))
            {
                assertEquals(new RawTxn.Fetched(-1, Errors.NONE), new RawTxn(again).fetch(GROUP, IN, 0, false),
                    "replayed: the tombstone between the record and its COMMIT drops it");
            }
        }
    }

    /**
     * Expiry ({@code internal.offsets.retention.ms}, a testing-only property): once a group committed after
     * ours has expired, ours is past retention too; its committed offset of a partition with an offset
     * pending is kept, and the group with it. After the transaction's ABORT nothing holds it: it expires.
     * The witness groups are placed in our group's {@code __consumer_offsets} partition, so that the log
     * answers their writes in the order sent: once the second witness's commit is answered, every
     * tombstone an expiry check sent before it is in that partition (none of ours). The retention is not
     * waited out: the coordinators' clock ({@link SteppedClock}) is stepped past it once the witness's
     * commit is answered (the test waited out 5 s of retention before issue 17's build work); the
     * transaction's timeout is longer than the step, so that only its ABORT ends it.
     */
    @Test
    void expiryKeepsACommittedOffsetWithOnePendingAndTheGroupUntilTheTransactionEnds() throws Exception
    {
        final long retentionMs = 60_000;
        final SteppedClock clock = new SteppedClock();
        try (RunningBroker broker = new RunningBroker(dir, Map.of("internal.offsets.retention.ms", Long.toString(retentionMs),
            "offsets.retention.check.interval.ms", "200"), clock); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 1, (short)1))).all().get();
            final TopicPartition tp = new TopicPartition(IN, 0);
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("expiring", (int)(5 * retentionMs));
            admin.alterConsumerGroupOffsets(GROUP, Map.of(tp, new OffsetAndMetadata(2))).all().get();
            assertEquals(Errors.NONE, txn.commit((short)5, "expiring", p, GROUP, IN, 0, 7));
            final int partitions = admin.describeTopics(List.of(OFFSETS)).allTopicNames().get().get(OFFSETS).partitions().size();
            final int home = CoordinatorTopic.partitionFor(GROUP, partitions);
            final String witness = besideGroup("witness-", partitions, 0);
            final String witness2 = besideGroup("witness-", partitions, 1);
            admin.alterConsumerGroupOffsets(witness, Map.of(tp, new OffsetAndMetadata(0))).all().get();
            final long witnessed = endOffset(admin, home);
            assertTrue(listed(admin).containsAll(Set.of(GROUP, witness)), "both groups kept within their retention");
            clock.step(Duration.ofMillis(retentionMs + 1)); // every offset above is past its retention now
            await(() -> !listed(admin).contains(witness), Duration.ofSeconds(60), "the witness group expired");
            admin.alterConsumerGroupOffsets(witness2, Map.of(tp, new OffsetAndMetadata(0))).all().get();
            assertEquals(witnessed + 3, endOffset(admin, home),
                "the witness's tombstones (its offset, its group) and the second witness's offset: no tombstone of " + GROUP + "'s");
            assertTrue(listed(admin).contains(GROUP), "the group with an offset pending is kept");
            assertEquals(new RawTxn.Fetched(2, Errors.NONE), txn.fetch(GROUP, IN, 0, false), "its committed offset is kept");
            assertEquals(new RawTxn.Fetched(-1, Errors.UNSTABLE_OFFSET_COMMIT), txn.fetch(GROUP, IN, 0, true));
            next(txn.endTxnV5("expiring", p, false));
            await(() -> !listed(admin).contains(GROUP), Duration.ofSeconds(60), "the group expired once the transaction ended");
        }
    }

    /** The {@code skip}-th id {@code prefix}N placed in {@link #GROUP}'s partition of {@code __consumer_offsets}. */
    private static String besideGroup(final String prefix, final int partitions, final int skip)
    {
        int left = skip;
        for (int i = 0; ; i++)
        {
            final String id = prefix + i;
            if (CoordinatorTopic.partitionFor(id, partitions) == CoordinatorTopic.partitionFor(GROUP, partitions) && left-- == 0)
            {
                return id;
            }
        }
    }

    private static long endOffset(final Admin admin, final int partition) throws Exception
    {
        final TopicPartition tp = new TopicPartition(OFFSETS, partition);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
    }

    @Test
    void requireStableOfEveryPartitionAnswersUnstableForAPendingOne() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 3, (short)1))).all().get();
            admin.alterConsumerGroupOffsets(GROUP, Map.of(new TopicPartition(IN, 0), new OffsetAndMetadata(5),
                new TopicPartition(IN, 1), new OffsetAndMetadata(6))).all().get();
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("stable");
            assertEquals(Errors.NONE, txn.commit((short)5, "stable", p, GROUP, IN, 0, 8));
            assertEquals(Errors.NONE, txn.commit((short)5, "stable", p, GROUP, IN, 2, 9), "pending, no committed offset");
            for (final short v : new short[] {7, 8})
            {
                assertEquals(Map.of(0, new RawTxn.Fetched(-1, Errors.UNSTABLE_OFFSET_COMMIT), 1, new RawTxn.Fetched(6, Errors.NONE)),
                    fetchAll(raw, v, true), "v" + v + ": partition 2 (pending only) not listed, as Kafka's fetchAllOffsets");
                assertEquals(Map.of(0, new RawTxn.Fetched(5, Errors.NONE), 1, new RawTxn.Fetched(6, Errors.NONE)), fetchAll(raw, v, false),
                    "v" + v + " without RequireStable: the committed offsets");
            }
            next(txn.endTxnV5("stable", p, true));
            await(() -> fetchAll(raw, (short)8, true).equals(Map.of(0, new RawTxn.Fetched(8, Errors.NONE),
                1, new RawTxn.Fetched(6, Errors.NONE), 2, new RawTxn.Fetched(9, Errors.NONE))), Duration.ofSeconds(20), "committed");
        }
    }

    @Test
    void metadataOverTheLimitIsThePartitionsOwnError() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("offset.metadata.max.bytes", "10")); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 2, (short)1))).all().get();
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("large");
            final TxnOffsetCommitRequestData request = RawTxn.request("large", p, GROUP, IN, 0, 5);
            request.topics().get(0).setPartitions(List.of(
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(5)
                    .setCommittedMetadata("0123456789"), // 10: the limit
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(1).setCommittedOffset(6)
                    .setCommittedMetadata("0123456789a"))); // 11: over it
            final TxnOffsetCommitResponseData answer = new TxnOffsetCommitResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.TXN_OFFSET_COMMIT, (short)5, request)), (short)5);
            final Map<Integer, Errors> errors = new TreeMap<>();
            answer.topics().get(0).partitions().forEach(r -> errors.put(r.partitionIndex(), Errors.forCode(r.errorCode())));
            assertEquals(Map.of(0, Errors.NONE, 1, Errors.OFFSET_METADATA_TOO_LARGE), errors);
            next(txn.endTxnV5("large", p, true));
            txn.awaitCommitted(GROUP, IN, 0, 5, "the partition within the limit committed");
            assertEquals(new RawTxn.Fetched(-1, Errors.NONE), txn.fetch(GROUP, IN, 1, true), "the one over it never written");
        }
    }

    /** OffsetFetch of every partition of the group (topics null), v7 (one group) or v8 (groups): each listed partition's answer. */
    private static Map<Integer, RawTxn.Fetched> fetchAll(final RawClient raw, final short v, final boolean requireStable) throws Exception
    {
        final OffsetFetchRequestData request = new OffsetFetchRequestData().setRequireStable(requireStable);
        if (v >= 8)
        {
            request.setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(GROUP).setTopics(null)));
        }
        else
        {
            request.setGroupId(GROUP).setTopics(null);
        }
        final OffsetFetchResponseData r = new OffsetFetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_FETCH, v, request)), v);
        final Map<Integer, RawTxn.Fetched> fetched = new TreeMap<>();
        if (v >= 8)
        {
            assertEquals(Errors.NONE, Errors.forCode(r.groups().get(0).errorCode()));
            r.groups().get(0).topics().forEach(t -> t.partitions().forEach(pa -> fetched.put(pa.partitionIndex(),
                new RawTxn.Fetched(pa.committedOffset(), Errors.forCode(pa.errorCode())))));
        }
        else
        {
            assertEquals(Errors.NONE, Errors.forCode(r.errorCode()));
            r.topics().forEach(t -> t.partitions().forEach(pa -> fetched.put(pa.partitionIndex(),
                new RawTxn.Fetched(pa.committedOffset(), Errors.forCode(pa.errorCode())))));
        }
        return fetched;
    }

    private static Set<String> listed(final Admin admin) throws Exception
    {
        return admin.listGroups().all().get(20, TimeUnit.SECONDS).stream().map(GroupListing::groupId).collect(Collectors.toSet());
    }
}
