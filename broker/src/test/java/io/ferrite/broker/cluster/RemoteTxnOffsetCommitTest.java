package io.ferrite.broker.cluster;

import io.ferrite.broker.e2e.RawClient;
import io.ferrite.broker.e2e.RawTxn;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Three nodes: TxnOffsetCommit v0-4 (a transaction version 0/1 client's sendOffsetsToTransaction: AddOffsetsToTxn to
 * the transaction coordinator, then TxnOffsetCommit to the group coordinator) when the transactional id's coordinator
 * and the group's are different nodes. The group coordinator verifies the transaction by an AddPartitionsToTxn v5
 * verify-only to the other node, as Kafka 4.4's AddPartitionsToTxnManager: the group's partition not in the
 * transaction is INVALID_TXN_STATE (v0-3) or TRANSACTION_ABORTABLE (v4), the answers a single Kafka 4.4 node gives
 * (TxnOffsetCommitBadInputTest); once AddOffsetsToTxn added it, each version commits, and after EndTxn the last offset
 * is the group's. kafka-clients 4.4 sends v5 (transaction version 2), so the old versions go as raw requests.
 */
@Tag("slow") // three broker JVMs: about a minute
final class RemoteTxnOffsetCommitTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String TOPIC = "remote-offsets";
    private static final byte GROUP_KEY = 0;
    private static final byte TRANSACTION_KEY = 1;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void oldTxnOffsetCommitVersionsAreVerifiedByTheTransactionsCoordinatorOnAnotherNode() throws Exception
    {
        cluster.start();
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)3))).all().get(60, TimeUnit.SECONDS);
        }
        final List<String> groups = IntStream.range(0, 20).mapToObj(i -> "remote-group-" + i).toList();
        final List<String> ids = IntStream.range(0, 20).mapToObj(i -> "remote-txn-" + i).toList();
        // the first FindCoordinator of each kind has the controller create its topic
        final Map<String, Integer> groupNodes = Await.awaitValue(() -> coordinators(GROUP_KEY, groups), m -> m.size() == groups.size(),
            DEADLINE, () -> "every group's coordinator: " + cluster.tails("__consumer_offsets"));
        final Map<String, Integer> idNodes = Await.awaitValue(() -> coordinators(TRANSACTION_KEY, ids), m -> m.size() == ids.size(),
            DEADLINE, () -> "every transactional id's coordinator: " + cluster.tails("__transaction_state"));
        final String id = ids.get(0);
        final int txnNode = idNodes.get(id);
        final String group = groups.stream().filter(g -> groupNodes.get(g) != txnNode).findFirst().orElseThrow(
            () -> new AssertionError("no group coordinated elsewhere than " + id + "'s node " + txnNode + ": " + groupNodes));
        final int groupNode = groupNodes.get(group);
        assertNotEquals(txnNode, groupNode, "the two coordinators");

        try (RawClient toTxnNode = new RawClient(cluster.brokerPort(txnNode)); RawClient toGroupNode = new RawClient(cluster.brokerPort(groupNode)))
        {
            final RawTxn transactions = new RawTxn(toTxnNode);
            final RawTxn offsets = new RawTxn(toGroupNode);
            final RawTxn.Producer p = Await.awaitValue(() -> initProducerId(transactions, id), r -> r != null, DEADLINE,
                () -> "InitProducerId of " + id + " on node " + txnNode);
            for (short v = 0; v <= 4; v++)
            {
                assertEquals(v <= 3 ? Errors.INVALID_TXN_STATE : Errors.TRANSACTION_ABORTABLE,
                    commit(offsets, v, id, p, group, 5), "v" + v + ": the group's partition not in the transaction");
            }
            assertEquals(Errors.NONE, transactions.addOffsets(id, p, group), "AddOffsetsToTxn on the transaction's node");
            for (short v = 0; v <= 4; v++)
            {
                assertEquals(Errors.NONE, commit(offsets, v, id, p, group, 10 + v), "v" + v + ": verified by node " + txnNode);
            }
            assertEquals(new RawTxn.Fetched(-1, Errors.UNSTABLE_OFFSET_COMMIT), offsets.fetch(group, TOPIC, 0, true),
                "pending until the transaction ends");
            assertEquals(Errors.NONE, transactions.endTxn(id, p, true));
            offsets.awaitCommitted(group, TOPIC, 0, 14, "v4's offset committed by the COMMIT marker from node " + txnNode);
        }
    }

    /** FindCoordinator v4 of {@code keys} to node 1: each key's coordinator node, those answered NONE only. */
    private Map<String, Integer> coordinators(final byte keyType, final List<String> keys) throws IOException
    {
        final short v = 4;
        try (RawClient raw = new RawClient(cluster.brokerPort(1)))
        {
            final FindCoordinatorResponseData r = new FindCoordinatorResponseData(new ByteBufferAccessor(raw.exchange(
                ApiKeys.FIND_COORDINATOR, v, new FindCoordinatorRequestData().setKeyType(keyType).setCoordinatorKeys(keys))), v);
            final Map<String, Integer> found = new HashMap<>();
            r.coordinators().stream().filter(c -> c.errorCode() == 0).forEach(c -> found.put(c.key(), c.nodeId()));
            return found;
        }
    }

    /**
     * TxnOffsetCommit {@code version} of {@code offset}, sent again while the group's partition is still loading on its
     * new leader (COORDINATOR_LOAD_IN_PROGRESS, or COORDINATOR_NOT_AVAILABLE as v0-1 get it), as a client retries.
     */
    private static Errors commit(final RawTxn offsets, final short version, final String id, final RawTxn.Producer p, final String group,
        final long offset)
    {
        return Await.awaitValue(() -> offsets.commit(version, id, p, group, TOPIC, 0, offset),
            e -> e != Errors.COORDINATOR_LOAD_IN_PROGRESS && e != Errors.COORDINATOR_NOT_AVAILABLE, DEADLINE,
            () -> "TxnOffsetCommit v" + version + " of " + group + " past its partition's load");
    }

    /** InitProducerId, or null while the node is not ready for it (its producer ids or the id's partition loading). */
    private static RawTxn.Producer initProducerId(final RawTxn transactions, final String id) throws IOException
    {
        try
        {
            return transactions.initProducerId(id);
        }
        catch (final IllegalStateException ex)
        {
            return null;
        }
    }
}
