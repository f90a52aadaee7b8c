package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;

import io.ferrite.testing.Await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

/** The transaction and offset requests of the offsets-in-transactions tests (the cluster's too), over a {@link RawClient}. */
public final class RawTxn
{
    /** A producer id and epoch. */
    public record Producer(long id, short epoch)
    {
    }

    /** A partition's committed offset as OffsetFetch answers it, with its error. */
    public record Fetched(long offset, Errors error)
    {
    }

    private final RawClient raw;

    public RawTxn(final RawClient raw)
    {
        this.raw = raw;
    }

    public Producer initProducerId(final String transactionalId) throws IOException
    {
        return initProducerId(transactionalId, 60_000);
    }

    Producer initProducerId(final String transactionalId, final int transactionTimeoutMs) throws IOException
    {
        final short v = 4;
        final InitProducerIdResponseData r = new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.INIT_PRODUCER_ID, v,
            new InitProducerIdRequestData().setTransactionalId(transactionalId).setTransactionTimeoutMs(transactionTimeoutMs))), v);
        if (r.errorCode() != 0)
        {
            throw new IllegalStateException("InitProducerId: " + Errors.forCode(r.errorCode()));
        }
        return new Producer(r.producerId(), r.producerEpoch());
    }

    public Errors addOffsets(final String transactionalId, final Producer p, final String groupId) throws IOException
    {
        final short v = 3;
        return Errors.forCode(new AddOffsetsToTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.ADD_OFFSETS_TO_TXN, v,
            new AddOffsetsToTxnRequestData().setTransactionalId(transactionalId).setProducerId(p.id()).setProducerEpoch(p.epoch())
                .setGroupId(groupId))), v).errorCode());
    }

    public Errors endTxn(final String transactionalId, final Producer p, final boolean commit) throws IOException
    {
        final short v = 3;
        return Errors.forCode(new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, v,
            new EndTxnRequestData().setTransactionalId(transactionalId).setProducerId(p.id()).setProducerEpoch(p.epoch())
                .setCommitted(commit))), v).errorCode());
    }

    /** EndTxn v5 (transaction version 2): its error, and the producer id and epoch of the next transaction (the epoch bumped). */
    EndTxnResponseData endTxnV5(final String transactionalId, final Producer p, final boolean commit) throws IOException
    {
        final short v = 5;
        return new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, v,
            new EndTxnRequestData().setTransactionalId(transactionalId).setProducerId(p.id()).setProducerEpoch(p.epoch())
                .setCommitted(commit))), v);
    }

    /** TxnOffsetCommit of one partition's offset (no member or generation); returns the partition's error. */
    public Errors commit(final short version, final String transactionalId, final Producer p, final String groupId, final String topic,
        final int partition, final long offset) throws IOException
    {
        return commit(version, request(transactionalId, p, groupId, topic, partition, offset));
    }

    /** A TxnOffsetCommit of one partition's offset by topic name (no member or generation), to change before sending. */
    static TxnOffsetCommitRequestData request(final String transactionalId, final Producer p, final String groupId, final String topic,
        final int partition, final long offset)
    {
        return new TxnOffsetCommitRequestData().setTransactionalId(transactionalId)
            .setGroupId(groupId).setProducerId(p.id()).setProducerEpoch(p.epoch())
            .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(topic).setPartitions(List.of(
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(partition).setCommittedOffset(offset)))));
    }

    /** Sends {@code request} (one topic, one partition); returns the partition's error. */
    Errors commit(final short version, final TxnOffsetCommitRequestData request) throws IOException
    {
        final TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData(new ByteBufferAccessor(
            raw.exchange(ApiKeys.TXN_OFFSET_COMMIT, version, request)), version);
        return Errors.forCode(response.topics().get(0).partitions().get(0).errorCode());
    }

    /** A client's WriteTxnMarkers v1 (kafka-transactions abort): an ABORT of the producer's transaction on one partition. */
    Errors abortMarker(final Producer p, final String topic, final int partition) throws IOException
    {
        final short v = 1;
        final WriteTxnMarkersResponseData r = new WriteTxnMarkersResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.WRITE_TXN_MARKERS, v,
            new WriteTxnMarkersRequestData().setMarkers(List.of(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(p.id())
                .setProducerEpoch(p.epoch()).setTransactionResult(false).setCoordinatorEpoch(0).setTopics(List.of(
                    new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(topic).setPartitionIndexes(List.of(partition)))))))), v);
        return Errors.forCode(r.markers().get(0).topics().get(0).partitions().get(0).errorCode());
    }

    /**
     * A TV1 client's sendOffsetsToTransaction: AddOffsetsToTxn (again while CONCURRENT_TRANSACTIONS, as the
     * client retries it: the last transaction's Complete* follows its markers) then TxnOffsetCommit v3;
     * the first error, or NONE.
     */
    Errors sendOffsets(final String transactionalId, final Producer p, final String groupId, final String topic, final int partition,
        final long offset) throws IOException
    {
        final Errors[] added = new Errors[1];
        Await.await(() -> (added[0] = addOffsets(transactionalId, p, groupId)) != Errors.CONCURRENT_TRANSACTIONS, Duration.ofSeconds(20),
            "AddOffsetsToTxn once the last transaction is complete");
        return added[0] != Errors.NONE ? added[0] : commit((short)3, transactionalId, p, groupId, topic, partition, offset);
    }

    /** Waits (20 s at most) until a RequireStable OffsetFetch answers {@code offset}: the markers come after EndTxn's answer. */
    public void awaitCommitted(final String groupId, final String topic, final int partition, final long offset, final String what)
    {
        Await.await(() -> fetch(groupId, topic, partition, true).equals(new Fetched(offset, Errors.NONE)), Duration.ofSeconds(20), what);
    }

    /** OffsetFetch v7 (one group, the first with RequireStable) of one partition, RequireStable. */
    Fetched fetchV7(final String groupId, final String topic, final int partition) throws IOException
    {
        final short v = 7;
        final OffsetFetchResponseData r = new OffsetFetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_FETCH, v,
            new OffsetFetchRequestData().setRequireStable(true).setGroupId(groupId).setTopics(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(topic).setPartitionIndexes(List.of(partition)))))), v);
        final OffsetFetchResponseData.OffsetFetchResponsePartition p = r.topics().get(0).partitions().get(0);
        return new Fetched(p.committedOffset(), Errors.forCode(p.errorCode()));
    }

    /** OffsetFetch v8 of one partition, with or without RequireStable. */
    public Fetched fetch(final String groupId, final String topic, final int partition, final boolean requireStable) throws IOException
    {
        final short v = 8;
        final OffsetFetchResponseData r = new OffsetFetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_FETCH, v,
            new OffsetFetchRequestData().setRequireStable(requireStable).setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup()
                .setGroupId(groupId).setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(topic)
                    .setPartitionIndexes(List.of(partition)))))))), v);
        final OffsetFetchResponseData.OffsetFetchResponsePartitions p = r.groups().get(0).topics().get(0).partitions().get(0);
        return new Fetched(p.committedOffset(), Errors.forCode(p.errorCode()));
    }
}
