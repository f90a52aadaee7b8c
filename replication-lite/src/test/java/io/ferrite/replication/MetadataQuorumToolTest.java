package io.ferrite.replication;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.ferrite.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's own {@code kafka-metadata-quorum} (MetadataQuorumCommand, kafka-tools 4.4, in a child JVM)
 * describes a Ferrite node's quorum through {@code --bootstrap-controller}: DescribeCluster answered by
 * {@link RaftInbound}, DescribeQuorum by KRaft.
 */
class MetadataQuorumToolTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void kafkaMetadataQuorumDescribesTheStatusAndTheReplicas() throws Exception
    {
        try (MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of()), dir, (offset, record) -> { }))
        {
            Await.await(quorum::isLeader, DEADLINE, "node 1 to lead its own quorum");
            final String controller = "127.0.0.1:" + quorum.boundAddress().getPort();

            final String status = metadataQuorum("--bootstrap-controller", controller, "describe", "--status");
            assertTrue(status.contains("ClusterId:              " + quorum.clusterId()), status);
            assertTrue(status.contains("LeaderId:               1"), status);
            assertTrue(status.contains("CurrentVoters:          [{\"id\": 1"), status);

            final String replication = metadataQuorum("--bootstrap-controller", controller, "describe", "--replication");
            assertTrue(replication.lines().anyMatch(line -> line.startsWith("1 ") && line.contains("Leader")), replication);
        }
    }

    private static String metadataQuorum(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m", "-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.MetadataQuorumCommand"));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), "kafka-metadata-quorum " + String.join(" ", args) + " said:\n" + out);
        System.out.println("kafka-metadata-quorum " + String.join(" ", args) + ":\n" + out);
        return out;
    }
}
