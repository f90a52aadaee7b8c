package io.ferrite.replication;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.metadata.PartitionRegistration;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@link ClusterView.PartitionChanges} hears, on Kafka's own {@link MetadataDelta} replaying the records the
 * controller writes: {@code leads}/{@code follows} fire for a new partition, for a new leader, and also for an ISR
 * change at an unchanged leader epoch (Kafka's {@code LocalReplicaChanges.leaders()}, not only its
 * {@code electedLeaders()}); the data path is written against this.
 */
class ClusterViewChangesTest
{
    private static final Uuid TOPIC_ID = Uuid.fromString("RmVycml0ZVZpZXdUZXN0MQ");

    @Test
    void leadsAndFollowsFireOnEveryPartitionEpochChangeNotOnlyOnANewLeaderEpoch()
    {
        MetadataImage image = MetadataImage.EMPTY;
        final List<String> node1 = new ArrayList<>();
        final List<String> node2 = new ArrayList<>();

        image = apply(image, List.of(new TopicRecord().setName("orders").setTopicId(TOPIC_ID),
            new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(0).setReplicas(List.of(1, 2)).setIsr(List.of(1, 2))
                .setLeader(1).setLeaderEpoch(0).setPartitionEpoch(0)), node1, node2);
        assertEquals(List.of("leads orders-0 leader 1 leaderEpoch 0 partitionEpoch 0 isr [1, 2]"), node1);
        assertEquals(List.of("follows orders-0 leader 1 leaderEpoch 0 partitionEpoch 0 isr [1, 2]"), node2);

        node1.clear();
        node2.clear();
        image = apply(image, List.of(new PartitionChangeRecord().setTopicId(TOPIC_ID).setPartitionId(0).setIsr(List.of(1))),
            node1, node2);
        assertEquals(List.of("leads orders-0 leader 1 leaderEpoch 0 partitionEpoch 1 isr [1]"), node1,
            "an ISR shrink: same leader epoch, heard again");
        assertEquals(List.of("follows orders-0 leader 1 leaderEpoch 0 partitionEpoch 1 isr [1]"), node2);

        node1.clear();
        node2.clear();
        apply(image, List.of(new PartitionChangeRecord().setTopicId(TOPIC_ID).setPartitionId(0).setLeader(2).setIsr(List.of(2))),
            node1, node2);
        assertEquals(List.of("follows orders-0 leader 2 leaderEpoch 1 partitionEpoch 2 isr [2]"), node1);
        assertEquals(List.of("leads orders-0 leader 2 leaderEpoch 1 partitionEpoch 2 isr [2]"), node2);
    }

    private static MetadataImage apply(final MetadataImage image, final List<? extends org.apache.kafka.common.protocol.ApiMessage> records,
        final List<String> node1, final List<String> node2)
    {
        final MetadataDelta delta = new MetadataDelta.Builder().setImage(image).build();
        records.forEach(delta::replay);
        ClusterView.tell(1, delta.topicsDelta(), recorder(node1));
        ClusterView.tell(2, delta.topicsDelta(), recorder(node2));
        return delta.apply(MetadataProvenance.EMPTY);
    }

    private static ClusterView.PartitionChanges recorder(final List<String> heard)
    {
        return new ClusterView.PartitionChanges()
        {
            @Override
            public void leads(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
            {
                heard.add("leads " + describe(partition, state));
            }

            @Override
            public void follows(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
            {
                heard.add("follows " + describe(partition, state));
            }

            @Override
            public void stopped(final TopicPartition partition)
            {
                heard.add("stopped " + partition);
            }
        };
    }

    private static String describe(final TopicPartition partition, final PartitionRegistration state)
    {
        return partition + " leader " + state.leader + " leaderEpoch " + state.leaderEpoch + " partitionEpoch " +
            state.partitionEpoch + " isr " + java.util.Arrays.toString(state.isr);
    }
}
