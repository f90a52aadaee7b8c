package io.ferrite.broker.cluster;

import io.ferrite.broker.e2e.RawClient;
import io.ferrite.testing.Await;
import org.apache.kafka.common.message.DescribeQuorumRequestData;
import org.apache.kafka.common.message.DescribeQuorumResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Producer ids are unique across a cluster (issue 14: two idempotent producers whose InitProducerId reached different
 * nodes both got id 0, and the partition leader took one's batches for the other's): InitProducerId sent to each of
 * three nodes gives three different ids — the blocks come from the active controller (AllocateProducerIds), not from
 * each node's own file — and after the active controller is SIGKILLed and restarted, the ids each node gives next
 * (the restarted one from a block its new incarnation asks for) are still new. A node that was alone before (its own
 * file of ids) skips the controller's blocks below the ids it gave, and every node's file is raised past its block.
 */
@Tag("slow") // three broker JVMs started, one killed and restarted: about 40 s
final class ProducerIdsClusterTest
{
    private static final short INIT_PRODUCER_ID_VERSION = 4;
    private static final short DESCRIBE_QUORUM_VERSION = 1;
    /** The end of the ids node 1 gave while it was alone (its file before it joins). */
    private static final long FORMER_END = 2500;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void idsFromEveryNodeAreDistinctBeforeAndAfterTheActiveControllerIsKilled() throws Exception
    {
        // node 1 was a node alone before and gave ids up to 2499 from its own file: it must not give them again
        Files.createDirectories(cluster.data(1));
        Files.writeString(cluster.data(1).resolve("ferrite-producer-ids"), Long.toString(FORMER_END));
        cluster.start();
        final List<Long> given = new ArrayList<>();
        for (int id = 1; id <= 3; id++)
        {
            given.add(initProducerId(id));
        }
        assertEquals(3, new HashSet<>(given).size(), "one id per node, all different: " + given);
        assertTrue(given.get(0) >= FORMER_END, "node 1's id past the ids it gave alone: " + given);
        for (int id = 1; id <= 3; id++)
        {
            // the file raised past the block taken: the node, started alone again, would not give its ids again
            final long end = Long.parseLong(Files.readString(cluster.data(id).resolve("ferrite-producer-ids")).trim());
            assertTrue(end > given.get(id - 1), "node " + id + "'s file " + end + " past its id " + given.get(id - 1));
        }

        final int controller = activeController();
        cluster.kill(controller);
        cluster.restart(controller);
        final List<Long> after = new ArrayList<>();
        for (int id = 1; id <= 3; id++)
        {
            after.add(initProducerId(id));
        }
        final Set<Long> all = new HashSet<>(given);
        all.addAll(after);
        assertEquals(6, all.size(), "ids after node " + controller + " (the active controller) was SIGKILLed and restarted, " +
            after + ", all new (before: " + given + ")");
    }

    /**
     * An idempotent producer's InitProducerId sent to node {@code id} itself; COORDINATOR_LOAD_IN_PROGRESS (no block from
     * the controller yet) asked again, as clients do.
     */
    private long initProducerId(final int id)
    {
        final InitProducerIdResponseData answer = Await.awaitValue(() ->
        {
            try (RawClient raw = new RawClient(cluster.brokerPort(id)))
            {
                final InitProducerIdRequestData request = new InitProducerIdRequestData().setTransactionalId(null)
                    .setTransactionTimeoutMs(Integer.MAX_VALUE).setProducerId(-1).setProducerEpoch((short)-1);
                return new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.INIT_PRODUCER_ID,
                    INIT_PRODUCER_ID_VERSION, request)), INIT_PRODUCER_ID_VERSION);
            }
        }, r -> r.errorCode() != Errors.COORDINATOR_LOAD_IN_PROGRESS.code(), ThreeNodes.START,
            () -> "an InitProducerId answer from node " + id + " other than COORDINATOR_LOAD_IN_PROGRESS: " + cluster.tail(id));
        assertEquals(Errors.NONE.code(), answer.errorCode(), "InitProducerId on node " + id + ": " + answer);
        assertTrue(answer.producerId() >= 0, "a producer id from node " + id + ": " + answer);
        return answer.producerId();
    }

    /**
     * The metadata quorum's leader (the active controller): the node whose controller listener answers DescribeQuorum
     * without an error (KRaft answers it on the leader only; the others NOT_LEADER_OR_FOLLOWER).
     */
    private int activeController()
    {
        return Await.awaitValue(() ->
        {
            for (int id = 1; id <= 3; id++)
            {
                final int leader = describedLeader(id);
                if (leader == id)
                {
                    return leader;
                }
            }
            return -1;
        }, leader -> leader >= 1, ThreeNodes.START, "a node whose controller listener describes itself as the quorum's leader");
    }

    private int describedLeader(final int id)
    {
        try (RawClient raw = new RawClient(cluster.controllerPort(id)))
        {
            final DescribeQuorumRequestData request = new DescribeQuorumRequestData().setTopics(List.of(
                new DescribeQuorumRequestData.TopicData().setTopicName("__cluster_metadata").setPartitions(List.of(
                    new DescribeQuorumRequestData.PartitionData().setPartitionIndex(0)))));
            final DescribeQuorumResponseData answer = new DescribeQuorumResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.DESCRIBE_QUORUM, DESCRIBE_QUORUM_VERSION, request)), DESCRIBE_QUORUM_VERSION);
            if (answer.errorCode() != Errors.NONE.code() || answer.topics().isEmpty())
            {
                return -1;
            }
            final DescribeQuorumResponseData.PartitionData p = answer.topics().get(0).partitions().get(0);
            return p.errorCode() == Errors.NONE.code() ? p.leaderId() : -1;
        }
        catch (final IOException ex)
        {
            return -1;
        }
    }
}
