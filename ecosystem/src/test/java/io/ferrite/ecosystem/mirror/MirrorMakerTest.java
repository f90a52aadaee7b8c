package io.ferrite.ecosystem.mirror;

import io.ferrite.testing.BrokerNode;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.MirrorMaker;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * MirrorMaker 2 (connect-mirror 4.3.1, its dedicated mode as {@code connect-mirror-maker} runs it) between a
 * Ferrite and an Apache Kafka 4.4 node, both ways at once: Ferrite -> Kafka and Kafka -> Ferrite, each with
 * its topic's records (keys, values, headers, timestamps, in order per partition), its consumer group's
 * checkpoints ({@code RemoteClusterUtils.translateOffsets}) and the group's offsets synced to the target.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class MirrorMakerTest
{
    @TempDir
    Path dir;

    @Test
    void mirrorsFerriteToKafkaAndKafkaToFerrite() throws Exception
    {
        try (BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite"));
            BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka")))
        {
            ferrite.awaitReady();
            kafka.awaitReady();
            final MirrorFlow out = new MirrorFlow(ferrite, kafka, "orders");
            final MirrorFlow in = new MirrorFlow(kafka, ferrite, "payments");
            out.prepare();
            in.prepare();
            final MirrorMaker mirrorMaker = new MirrorMaker(mirrorMakerConfig(out, in));
            mirrorMaker.start();
            try
            {
                out.produceRestOfPartition0();
                in.produceRestOfPartition0();
                report(out, out.verify());
                report(in, in.verify());
            }
            finally
            {
                mirrorMaker.stop();
            }
        }
    }

    private static void report(final MirrorFlow flow, final Map<TopicPartition, OffsetAndMetadata> translated)
    {
        System.out.println(java.time.Instant.now() + " " + flow.source.name + " -> " + flow.target.name + ": group at " + MirrorFlow.COMMITTED
            + " translated to " + translated + "; checkpoints " + flow.checkpointHistory() + "; offset syncs " + flow.offsetSyncTimeline());
    }

    /**
     * The configuration the README gives for mirroring a Ferrite into a Kafka cluster (and back), with the
     * test's short intervals: single-node clusters (replication factor 1), checkpoints and group offsets
     * synced every second, and the source tasks' commit (which writes the offset sync of the last record
     * mirrored) every second.
     */
    static Map<String, String> mirrorMakerConfig(final MirrorFlow... flows)
    {
        final Map<String, String> config = new HashMap<>();
        final StringBuilder clusters = new StringBuilder();
        for (final MirrorFlow flow : flows)
        {
            for (final BrokerNode broker : new BrokerNode[] {flow.source, flow.target})
            {
                if (!config.containsKey(broker.name + ".bootstrap.servers"))
                {
                    clusters.append(clusters.length() == 0 ? "" : ",").append(broker.name);
                    config.put(broker.name + ".bootstrap.servers", broker.bootstrap());
                    // the herder whose target this cluster is: its source tasks commit (and so write the offset
                    // sync of the last record they mirrored) every second instead of every minute; its plugins are
                    // found through their ServiceLoader manifests, without scanning the class path
                    config.put(broker.name + ".offset.flush.interval.ms", "1000");
                    config.put(broker.name + ".plugin.discovery", "service_load");
                }
            }
            final String route = flow.source.name + "->" + flow.target.name;
            config.put(route + ".enabled", "true");
            config.put(route + ".topics", flow.topic);
            config.put(route + ".groups", flow.group);
        }
        config.put("clusters", clusters.toString());
        config.put("replication.factor", "1");
        config.put("checkpoints.topic.replication.factor", "1");
        config.put("heartbeats.topic.replication.factor", "1");
        config.put("offset-syncs.topic.replication.factor", "1");
        config.put("config.storage.replication.factor", "1");
        config.put("offset.storage.replication.factor", "1");
        config.put("status.storage.replication.factor", "1");
        config.put("emit.checkpoints.interval.seconds", "1");
        config.put("sync.group.offsets.enabled", "true");
        config.put("sync.group.offsets.interval.seconds", "1");
        config.put("refresh.groups.interval.seconds", "1");
        config.put("sync.topic.acls.enabled", "false"); // Ferrite has no authorizer (SECURITY_DISABLED): no ACLs to copy
        return config;
    }
}
