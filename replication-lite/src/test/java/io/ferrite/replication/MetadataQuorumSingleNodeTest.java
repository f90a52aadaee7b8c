package io.ferrite.replication;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.ferrite.testing.Await;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One node with no settings is its own quorum: it leads, commits, and finds its records again after a restart. */
class MetadataQuorumSingleNodeTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aNodeWithNoSettingsLeadsCommitsAndReplaysAfterARestart() throws Exception
    {
        final Uuid incarnation = Uuid.randomUuid();
        final List<ApiMessageAndVersion> records = List.of(
            new ApiMessageAndVersion(new RegisterBrokerRecord().setBrokerId(1).setBrokerEpoch(7).setIncarnationId(incarnation), (short)0),
            new ApiMessageAndVersion(new UnfenceBrokerRecord().setId(1).setEpoch(7), (short)0));
        final long lastOffset;
        final ConcurrentSkipListMap<Long, ApiMessageAndVersion> seen = new ConcurrentSkipListMap<>();
        try (MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of()), dir, seen::put))
        {
            Await.await(quorum::isLeader, DEADLINE, () -> "node 1 to lead its own quorum; leader " + quorum.leaderId());
            lastOffset = quorum.append(records).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertTrue(quorum.committedOffset() >= lastOffset, "committed " + quorum.committedOffset() + " < " + lastOffset);
            assertEquals(records, List.copyOf(seen.subMap(lastOffset - 1, true, lastOffset, true).values()));
        }
        final ConcurrentSkipListMap<Long, ApiMessageAndVersion> replayed = new ConcurrentSkipListMap<>();
        try (MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of()), dir, replayed::put))
        {
            Await.await(() -> replayed.containsKey(lastOffset), DEADLINE, () -> "offset " + lastOffset + " replayed; saw " + replayed);
            assertEquals(records, List.copyOf(replayed.subMap(lastOffset - 1, true, lastOffset, true).values()));
        }
    }

    @Test
    void aFollowerRefusesToAppendAndNamesTheLeader() throws Exception
    {
        // two voters in this JVM: one leads, the other knows it and must refuse
        final StringBuilder voters = new StringBuilder();
        final int[] ports = LoopbackPorts.take(2);
        for (int id = 1; id <= 2; id++)
        {
            voters.append(id == 1 ? "" : ",").append(id).append("@127.0.0.1:").append(ports[id - 1]);
        }
        final MetadataQuorum[] nodes = new MetadataQuorum[2];
        try
        {
            for (int id = 1; id <= 2; id++)
            {
                nodes[id - 1] = MetadataQuorum.start(QuorumSettings.from(Map.of(QuorumSettings.NODE_ID, Integer.toString(id),
                    "controller.quorum.voters", voters.toString(), QuorumSettings.CLUSTER_ID, "RmVycml0ZVRlc3QwMDAwMQ")),
                    dir.resolve("node-" + id), (offset, record) -> { });
            }
            Await.await(() -> nodes[0].isLeader() != nodes[1].isLeader() &&
                nodes[0].leaderId().equals(nodes[1].leaderId()), DEADLINE,
                () -> "one leader both voters know; leaders " + nodes[0].leaderId() + ", " + nodes[1].leaderId());
            final MetadataQuorum follower = nodes[0].isLeader() ? nodes[1] : nodes[0];
            final ExecutionException refused = assertThrows(ExecutionException.class, () -> follower.append(
                List.of(new ApiMessageAndVersion(new UnfenceBrokerRecord().setId(1), (short)0))).get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            assertInstanceOf(NotLeaderOrFollowerException.class, refused.getCause());
            assertTrue(refused.getCause().getMessage().contains("the leader is " + follower.leaderId()), refused.getCause().getMessage());
        }
        finally
        {
            for (final MetadataQuorum node : nodes)
            {
                if (node != null)
                {
                    node.close();
                }
            }
        }
    }

    @Test
    void anEmptyListenerHostBindsEveryInterfaceAsInKafka() throws Exception
    {
        final QuorumSettings settings = QuorumSettings.from(Map.of("listeners", "CONTROLLER://:0"));
        final InetAddress bind = settings.bindAddress().getAddress();
        assertTrue(bind != null && bind.isAnyLocalAddress(), "CONTROLLER://:0 binds " + settings.bindAddress());
        try (MetadataQuorum quorum = MetadataQuorum.start(settings, dir, (offset, record) -> { }))
        {
            assertTrue(quorum.boundAddress().getAddress().isAnyLocalAddress(), "bound to " + quorum.boundAddress());
            Await.await(quorum::isLeader, DEADLINE, () -> "node 1 to lead its own quorum; leader " + quorum.leaderId());
            assertTrue(quorum.append(List.of(new ApiMessageAndVersion(new UnfenceBrokerRecord().setId(1), (short)0)))
                .get(DEADLINE.toSeconds(), TimeUnit.SECONDS) >= 0);
        }
    }

    @Test
    void aLogOfAnotherNodeOrClusterIsRefused() throws Exception
    {
        final String clusterId;
        try (MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of()), dir, (offset, record) -> { }))
        {
            clusterId = quorum.clusterId();
        }
        final ConfigException otherNode = assertThrows(ConfigException.class, () -> MetadataQuorum.start(
            QuorumSettings.from(Map.of(QuorumSettings.NODE_ID, "2", "controller.quorum.voters", "2@127.0.0.1:0")), dir,
            (offset, record) -> { }));
        assertTrue(otherNode.getMessage().contains(QuorumSettings.NODE_ID), otherNode.getMessage());
        final ConfigException otherCluster = assertThrows(ConfigException.class, () -> MetadataQuorum.start(
            QuorumSettings.from(Map.of(QuorumSettings.CLUSTER_ID, "T3RoZXJDbHVzdGVyMDAwMQ")), dir, (offset, record) -> { }));
        assertTrue(otherCluster.getMessage().contains(QuorumSettings.CLUSTER_ID), otherCluster.getMessage());
        try (MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of(QuorumSettings.CLUSTER_ID, clusterId)),
            dir, (offset, record) -> { }))
        {
            assertEquals(clusterId, quorum.clusterId(), "the cluster id made at the first start is kept");
        }
    }

    @Test
    void settingsNotSupportedYetAreRefusedByName()
    {
        final ConfigException dynamic = assertThrows(ConfigException.class, () -> QuorumSettings.from(
            Map.of("controller.quorum.bootstrap.servers", "127.0.0.1:9093")));
        assertTrue(dynamic.getMessage().contains("controller.quorum.bootstrap.servers"), dynamic.getMessage());
        final ConfigException observer = assertThrows(ConfigException.class, () -> QuorumSettings.from(
            Map.of("process.roles", "broker")));
        assertTrue(observer.getMessage().contains("process.roles"), observer.getMessage());
        final ConfigException notAVoter = assertThrows(ConfigException.class, () -> QuorumSettings.from(
            Map.of("node.id", "4", "controller.quorum.voters", "1@127.0.0.1:9093")));
        assertTrue(notAVoter.getMessage().contains("controller.quorum.voters"), notAVoter.getMessage());
        final ConfigException noClusterId = assertThrows(ConfigException.class, () -> QuorumSettings.from(
            Map.of("controller.quorum.voters", "1@127.0.0.1:9093,2@127.0.0.1:9094")));
        assertTrue(noClusterId.getMessage().contains(QuorumSettings.CLUSTER_ID), noClusterId.getMessage());
        final ConfigException badNodeId = assertThrows(ConfigException.class, () -> QuorumSettings.from(Map.of("node.id", "one")));
        assertTrue(badNodeId.getMessage().contains(QuorumSettings.NODE_ID), badNodeId.getMessage());
    }
}
