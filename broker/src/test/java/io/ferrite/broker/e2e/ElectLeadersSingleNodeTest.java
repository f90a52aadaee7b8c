package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * ElectLeaders on a single node, through kafka-clients' Admin, answered as a one-node Kafka 4.4 answers the same calls
 * (checked with {@code /work/shared/kafka-ref}): ELECTION_NOT_NEEDED for a partition that exists, preferred or unclean
 * ("Leader election not needed for topic partition."), UNKNOWN_TOPIC_OR_PARTITION "No such topic as nosuch" and "No such
 * partition as present-5", no results for an election of every partition. The reassignment APIs are not served on a
 * single node (not advertised: the Admin call fails UnsupportedVersionException), where Kafka serves them.
 */
final class ElectLeadersSingleNodeTest
{
    @TempDir
    Path dir;

    @Test
    void electionsAreNotNeededOnTheOnlyReplica() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("present", 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            final TopicPartition present = new TopicPartition("present", 0);
            final TopicPartition noPartition = new TopicPartition("present", 5);
            final TopicPartition noTopic = new TopicPartition("nosuch", 0);
            for (final ElectionType type : ElectionType.values())
            {
                final Map<TopicPartition, Optional<Throwable>> results = admin.electLeaders(type,
                    Set.of(present, noPartition, noTopic)).partitions().get(30, TimeUnit.SECONDS);
                assertEquals(Set.of(present, noPartition, noTopic), results.keySet(), type.toString());
                final Throwable notNeeded = results.get(present).orElseThrow();
                assertInstanceOf(ElectionNotNeededException.class, notNeeded, type.toString());
                assertEquals("Leader election not needed for topic partition.", notNeeded.getMessage());
                assertInstanceOf(UnknownTopicOrPartitionException.class, results.get(noPartition).orElseThrow());
                assertEquals("No such partition as present-5", results.get(noPartition).orElseThrow().getMessage());
                assertInstanceOf(UnknownTopicOrPartitionException.class, results.get(noTopic).orElseThrow());
                assertEquals("No such topic as nosuch", results.get(noTopic).orElseThrow().getMessage());
                assertEquals(Map.of(), admin.electLeaders(type, null).partitions().get(30, TimeUnit.SECONDS),
                    "an election of every partition lists only those elected: none");
            }
            final ExecutionException reassign = assertThrows(ExecutionException.class, () -> admin.alterPartitionReassignments(
                Map.of(present, Optional.of(new NewPartitionReassignment(List.of(0))))).all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(UnsupportedVersionException.class, reassign.getCause(), reassign.toString());
        }
    }
}
