package io.ferrite.replication;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.metadata.BrokerRegistrationFencingChange;
import org.apache.kafka.metadata.BrokerRegistrationInControlledShutdownChange;
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

    /**
     * Issue 14: the brokers a leader may wait for or take into an ISR (Kafka's {@code isReplicaIsrEligible}: registered,
     * unfenced, not in controlled shutdown, with their broker epochs) are told whenever the image's brokers change, and
     * before the partitions' changes of the same delta: the controller fences a broker and takes it out of the ISRs in
     * one batch, and the leader must know it fenced when it applies the smaller ISR.
     */
    @Test
    void theEligibleBrokersAreToldBeforeThePartitionChangesOfTheSameDelta()
    {
        final List<String> heard = new ArrayList<>();
        final ClusterView.PartitionChanges node1 = new ClusterNode.Changes(new ClusterNode.LocalReplicas()
        {
            @Override
            public void leads(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
            {
                heard.add("leads " + topic.name() + "-" + state.partition() + " isr " + java.util.Arrays.toString(state.isr()));
            }

            @Override
            public void follows(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
            {
                heard.add("follows " + topic.name() + "-" + state.partition());
            }

            @Override
            public void stopped(final String topic, final int partition)
            {
                heard.add("stopped " + topic + "-" + partition);
            }

            @Override
            public void eligibleBrokers(final int[] ids, final long[] epochs)
            {
                final java.util.TreeMap<Integer, Long> byId = new java.util.TreeMap<>();
                for (int i = 0; i < ids.length; i++)
                {
                    byId.put(ids[i], epochs[i]);
                }
                heard.add("eligible " + byId);
            }
        });
        MetadataImage image = MetadataImage.EMPTY;
        image = publish(image, node1, List.of(register(1, 10), register(2, 20), register(3, 30),
            new TopicRecord().setName("orders").setTopicId(TOPIC_ID),
            new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(0).setReplicas(List.of(1, 2, 3)).setIsr(List.of(1, 2, 3))
                .setLeader(1).setLeaderEpoch(0).setPartitionEpoch(0)));
        assertEquals(List.of("eligible {1=10, 2=20, 3=30}", "leads orders-0 isr [1, 2, 3]"), heard);

        heard.clear();
        image = publish(image, node1, List.of(new BrokerRegistrationChangeRecord().setBrokerId(3).setBrokerEpoch(30)
            .setFenced(BrokerRegistrationFencingChange.FENCE.value()),
            new PartitionChangeRecord().setTopicId(TOPIC_ID).setPartitionId(0).setIsr(List.of(1, 2))));
        assertEquals(List.of("eligible {1=10, 2=20}", "leads orders-0 isr [1, 2]"), heard, "fenced, then the ISR without it");

        heard.clear();
        image = publish(image, node1, List.of(new BrokerRegistrationChangeRecord().setBrokerId(2).setBrokerEpoch(20)
            .setInControlledShutdown(BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN.value())));
        assertEquals(List.of("eligible {1=10}"), heard, "a broker in controlled shutdown is not eligible");

        heard.clear();
        publish(image, node1, List.of(register(3, 31)));
        assertEquals(List.of("eligible {1=10, 3=31}"), heard, "restarted with a new broker epoch");
    }

    private static RegisterBrokerRecord register(final int id, final long epoch)
    {
        return new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch).setFenced(false)
            .setIncarnationId(Uuid.randomUuid()).setLogDirs(List.of(Uuid.randomUuid()));
    }

    private static MetadataImage publish(final MetadataImage image, final ClusterView.PartitionChanges changes,
        final List<? extends org.apache.kafka.common.protocol.ApiMessage> records)
    {
        final MetadataDelta delta = new MetadataDelta.Builder().setImage(image).build();
        records.forEach(delta::replay);
        final MetadataImage next = delta.apply(MetadataProvenance.EMPTY);
        ClusterView.tell(1, delta, next, changes);
        return next;
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
