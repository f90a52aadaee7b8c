package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Topic administration off the network threads (issue 17): the admin agent creates, grows, deletes
 * and reconfigures topics and DeleteRecords runs on the partition's log thread, so a network thread
 * serves its other connections while that work waits or runs. One network thread, so every
 * connection shares it. The agent (or a log thread) is held still by a task that waits on a latch:
 * what did not happen yet is certain, not a matter of timing.
 */
class AdminOffNetworkThreadTest
{
    private static final short CREATE_V = 7;
    private static final short DELETE_V = 6;
    private static final short PARTITIONS_V = 3;
    private static final short RECORDS_V = 2;
    private static final short METADATA_V = 12;
    private static final short FIND_V = 4;
    private static final short ALTER_V = 1;
    private static final int TOPICS = 100;

    @TempDir
    Path dir;

    private RunningBroker broker;
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of(BrokerConfig.NUM_NETWORK_THREADS, "1"));
    }

    @AfterEach
    void stop() throws Exception
    {
        release.countDown();
        broker.close();
    }

    @Test
    void aNetworkThreadAnswersItsOtherConnectionsWhileALargeCreateTopicsWaitsForTheAgent() throws Exception
    {
        broker.broker.admin().createTopic("existing", 1, Map.of()).get(20, TimeUnit.SECONDS);
        holdTheAgent();
        try (RawClient creator = new RawClient(port()); RawClient other = new RawClient(port());
             KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            final int create = creator.send(ApiKeys.CREATE_TOPICS, CREATE_V, createTopics("bulk-", TOPICS, 30_000));

            // the same network thread answers another connection's requests, and a produce, meanwhile
            assertEquals(0, other.apiVersions().errorCode());
            final MetadataResponseData metadata = metadata(other, "existing");
            assertEquals(Errors.NONE.code(), metadata.topics().iterator().next().errorCode());
            assertEquals(0L, producer.send(new ProducerRecord<>("existing", new byte[10])).get(20, TimeUnit.SECONDS).offset());

            // the agent is held: nothing of the CreateTopics is done, so it cannot have been answered
            assertEquals(0, created("bulk-"), "topics created while the agent was held");
            assertFalse(creator.answered(), "CreateTopics answered before the agent ran it");

            release.countDown();
            final CreateTopicsResponseData response = new CreateTopicsResponseData(
                new ByteBufferAccessor(creator.receive(ApiKeys.CREATE_TOPICS, CREATE_V, create)), CREATE_V);
            assertEquals(TOPICS, response.topics().size());
            // answered once journaled (issue 11): the agent publishes the topics after it made their files, right after the answer
            io.ferrite.testing.Await.await(() -> created("bulk-") == TOPICS, java.time.Duration.ofSeconds(30), "the topics published");
            for (final CreateTopicsResponseData.CreatableTopicResult r : response.topics())
            {
                assertEquals(Errors.NONE.code(), r.errorCode(), r.name() + ": " + r.errorMessage());
                assertEquals(1, r.numPartitions());
                final Topic topic = broker.broker.topics().topic(r.name());
                assertNotNull(topic, r.name());
                assertEquals(topic.idMostSignificantBits, r.topicId().getMostSignificantBits());
            }
            assertEquals(TOPICS, created("bulk-"));
        }
    }

    @Test
    void noNetworkThreadTakesTheRegistrysMonitor() throws Exception
    {
        try (RawClient creator = new RawClient(port()); RawClient other = new RawClient(port()))
        {
            // before the admin agent, CreateTopics ran on the network thread inside the registry's
            // monitor: holding it stopped that thread, and the ApiVersions below was never answered
            synchronized (broker.broker.topics())
            {
                final int create = creator.send(ApiKeys.CREATE_TOPICS, CREATE_V, createTopics("held-", TOPICS, 30_000));
                assertEquals(0, other.apiVersions().errorCode());
                final CreateTopicsResponseData response = new CreateTopicsResponseData(
                    new ByteBufferAccessor(creator.receive(ApiKeys.CREATE_TOPICS, CREATE_V, create)), CREATE_V);
                for (final CreateTopicsResponseData.CreatableTopicResult r : response.topics())
                {
                    assertEquals(Errors.NONE.code(), r.errorCode(), r.name() + ": " + r.errorMessage());
                }
            }
            // answered once journaled (issue 11): published by the agent right after the answer, once their files are made
            io.ferrite.testing.Await.await(() -> created("held-") == TOPICS, java.time.Duration.ofSeconds(30), "the topics published");
        }
    }

    @Test
    void createDeleteAndGrowNotTakenByTheAgentWithinTheirTimeoutAreRequestTimedOutAndNeverDone() throws Exception
    {
        broker.broker.admin().createTopic("kept", 1, Map.of()).get(20, TimeUnit.SECONDS);
        holdTheAgent();
        try (RawClient client = new RawClient(port()))
        {
            final CreateTopicsRequestData late = createTopics("late-", 1, 200);
            late.topics().add(new CreateTopicsRequestData.CreatableTopic().setName("kept").setNumPartitions(1).setReplicationFactor((short)1));
            final CreateTopicsResponseData created = new CreateTopicsResponseData(new ByteBufferAccessor(
                client.exchange(ApiKeys.CREATE_TOPICS, CREATE_V, late)), CREATE_V);
            assertEquals(Errors.REQUEST_TIMED_OUT.code(), created.topics().find("late-0").errorCode());
            // every topic of a request that timed out, as Kafka answers (not TOPIC_ALREADY_EXISTS)
            assertEquals(Errors.REQUEST_TIMED_OUT.code(), created.topics().find("kept").errorCode());

            final DeleteTopicsResponseData deleted = new DeleteTopicsResponseData(new ByteBufferAccessor(client.exchange(
                ApiKeys.DELETE_TOPICS, DELETE_V, new DeleteTopicsRequestData().setTimeoutMs(200).setTopics(List.of(
                    new DeleteTopicsRequestData.DeleteTopicState().setName("kept"))))), DELETE_V);
            assertEquals(Errors.REQUEST_TIMED_OUT.code(), deleted.responses().find("kept").errorCode());

            final CreatePartitionsResponseData grown = new CreatePartitionsResponseData(new ByteBufferAccessor(client.exchange(
                ApiKeys.CREATE_PARTITIONS, PARTITIONS_V, new CreatePartitionsRequestData().setTimeoutMs(200).setTopics(
                    new CreatePartitionsRequestData.CreatePartitionsTopicCollection(List.of(
                        new CreatePartitionsRequestData.CreatePartitionsTopic().setName("kept").setCount(3).setAssignments(null)).iterator())))),
                PARTITIONS_V);
            assertEquals(Errors.REQUEST_TIMED_OUT.code(), grown.results().get(0).errorCode());

            // validateOnly needs no agent: answered while it is held, nothing created
            final CreateTopicsResponseData validated = new CreateTopicsResponseData(new ByteBufferAccessor(client.exchange(
                ApiKeys.CREATE_TOPICS, CREATE_V, createTopics("checked-", 1, 30_000).setValidateOnly(true))), CREATE_V);
            assertEquals(Errors.NONE.code(), validated.topics().find("checked-0").errorCode());
        }
        release.countDown();
        // the agent runs its commands in order: once this one ran, the expired ones were passed over
        broker.broker.admin().createTopic("after", 1, Map.of()).get(20, TimeUnit.SECONDS);
        final TopicRegistry topics = broker.broker.topics();
        assertNull(topics.topic("late-0"), "a creation answered REQUEST_TIMED_OUT was done");
        assertNull(topics.topic("checked-0"), "validateOnly created the topic");
        assertNotNull(topics.topic("kept"), "a deletion answered REQUEST_TIMED_OUT was done");
        assertEquals(1, topics.topic("kept").partitions.length, "a growth answered REQUEST_TIMED_OUT was done");
    }

    @Test
    void configChangesAndMetadataAutoCreationWaitForTheAgentOnTheirConnectionsOnly() throws Exception
    {
        broker.broker.admin().createTopic("tuned", 1, Map.of()).get(20, TimeUnit.SECONDS);
        holdTheAgent();
        try (RawClient alterer = new RawClient(port()); RawClient asker = new RawClient(port());
             RawClient other = new RawClient(port()))
        {
            final int alter = alterer.send(ApiKeys.INCREMENTAL_ALTER_CONFIGS, ALTER_V, alterConfigs("tuned", "retention.ms", "60000", false));
            final int auto = asker.send(ApiKeys.METADATA, METADATA_V, new MetadataRequestData().setAllowAutoTopicCreation(true)
                .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("auto-made"))));
            assertEquals(0, other.apiVersions().errorCode());
            // validateOnly needs no agent
            final IncrementalAlterConfigsResponseData validated = new IncrementalAlterConfigsResponseData(new ByteBufferAccessor(
                other.exchange(ApiKeys.INCREMENTAL_ALTER_CONFIGS, ALTER_V, alterConfigs("tuned", "retention.ms", "1", true))), ALTER_V);
            assertEquals(Errors.NONE.code(), validated.responses().get(0).errorCode());

            assertEquals(Map.of(), broker.broker.topics().topic("tuned").overrides, "changed while the agent was held");
            assertNull(broker.broker.topics().topic("auto-made"), "auto-created while the agent was held");
            assertFalse(alterer.answered(), "IncrementalAlterConfigs answered before the agent ran it");
            assertFalse(asker.answered(), "Metadata answered before the agent created its topic");

            release.countDown();
            final IncrementalAlterConfigsResponseData altered = new IncrementalAlterConfigsResponseData(new ByteBufferAccessor(
                alterer.receive(ApiKeys.INCREMENTAL_ALTER_CONFIGS, ALTER_V, alter)), ALTER_V);
            assertEquals(Errors.NONE.code(), altered.responses().get(0).errorCode());
            assertEquals(Map.of("retention.ms", "60000"), broker.broker.topics().topic("tuned").overrides);
            // answered from the request's bytes once the topic exists: described, not an error
            final MetadataResponseData described = new MetadataResponseData(new ByteBufferAccessor(
                asker.receive(ApiKeys.METADATA, METADATA_V, auto)), METADATA_V);
            final MetadataResponseData.MetadataResponseTopic made = described.topics().find("auto-made");
            assertEquals(Errors.NONE.code(), made.errorCode());
            assertEquals(1, made.partitions().size());
            assertEquals(broker.broker.topics().topic("auto-made").idMostSignificantBits, made.topicId().getMostSignificantBits());
        }
    }

    @Test
    void theFirstFindCoordinatorIsAnsweredOnceTheAgentCreatedTheOffsetsTopic() throws Exception
    {
        holdTheAgent();
        try (RawClient member = new RawClient(port()); RawClient other = new RawClient(port()))
        {
            final int find = member.send(ApiKeys.FIND_COORDINATOR, FIND_V, new FindCoordinatorRequestData().setKeyType((byte)0)
                .setCoordinatorKeys(List.of("g")));
            assertEquals(0, other.apiVersions().errorCode());
            assertNull(broker.broker.topics().topic("__consumer_offsets"), "created while the agent was held");
            assertFalse(member.answered(), "FindCoordinator answered before the offsets topic existed");

            release.countDown();
            final FindCoordinatorResponseData response = new FindCoordinatorResponseData(
                new ByteBufferAccessor(member.receive(ApiKeys.FIND_COORDINATOR, FIND_V, find)), FIND_V);
            assertEquals(Errors.NONE.code(), response.coordinators().get(0).errorCode());
            assertNotNull(broker.broker.topics().topic("__consumer_offsets"));
        }
    }

    @Test
    void deleteRecordsRunsOnThePartitionsLogThreadAndIsAnsweredWhenItRan() throws Exception
    {
        broker.broker.admin().createTopic("records", 1, Map.of()).get(20, TimeUnit.SECONDS);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            for (int i = 0; i < 5; i++)
            {
                producer.send(new ProducerRecord<>("records", new byte[10])).get(20, TimeUnit.SECONDS);
            }
        }
        final Partition partition = broker.broker.topics().topic("records").partitions[0];
        final CountDownLatch held = new CountDownLatch(1);
        broker.broker.executeOnOwner(partition.owner, () -> hold(held));
        assertTrue(held.await(20, TimeUnit.SECONDS), "the log thread never ran the holding task");
        try (RawClient deleter = new RawClient(port()); RawClient other = new RawClient(port()))
        {
            final int delete = deleter.send(ApiKeys.DELETE_RECORDS, RECORDS_V, deleteRecords("records", 3, 30_000));
            assertEquals(0, other.apiVersions().errorCode());
            // the partition's log thread is held: the log start has not moved, so no answer can have been written
            assertEquals(0, partition.log.logStartOffset(), "DeleteRecords ran off the partition's log thread");
            assertFalse(deleter.answered(), "DeleteRecords answered before its log thread ran it");

            // one whose log thread does not get to it within its timeout: Kafka on one node never times a
            // DeleteRecords out (its local deletion completes it), so it too waits for the log thread
            final long sent = System.currentTimeMillis();
            final int late = other.send(ApiKeys.DELETE_RECORDS, RECORDS_V, deleteRecords("records", 4, 1));
            try (RawClient probe = new RawClient(port()))
            {
                await(() -> System.currentTimeMillis() > sent + 2, Duration.ofSeconds(5), "its timeoutMs passed");
                // two round trips: the second's pass of the network thread began after the first's poll of
                // the waiting answers, which came after the deadline
                assertEquals(0, probe.apiVersions().errorCode());
                assertEquals(0, probe.apiVersions().errorCode());
            }
            assertFalse(other.answered(), "DeleteRecords answered at its timeoutMs (REQUEST_TIMED_OUT) before its log thread ran it");

            release.countDown();
            final DeleteRecordsResponseData response = new DeleteRecordsResponseData(new ByteBufferAccessor(
                deleter.receive(ApiKeys.DELETE_RECORDS, RECORDS_V, delete)), RECORDS_V);
            final DeleteRecordsResponseData.DeleteRecordsPartitionResult result = response.topics().find("records").partitions().find(0);
            assertEquals(Errors.NONE.code(), result.errorCode());
            assertEquals(3, result.lowWatermark());
            final DeleteRecordsResponseData.DeleteRecordsPartitionResult after = new DeleteRecordsResponseData(new ByteBufferAccessor(
                other.receive(ApiKeys.DELETE_RECORDS, RECORDS_V, late)), RECORDS_V).topics().find("records").partitions().find(0);
            assertEquals(Errors.NONE.code(), after.errorCode(), "a DeleteRecords past its timeoutMs is answered NONE once it ran");
            assertEquals(4, after.lowWatermark());
        }
    }

    private void holdTheAgent() throws InterruptedException
    {
        final CountDownLatch held = new CountDownLatch(1);
        broker.broker.admin().execute(() -> hold(held));
        assertTrue(held.await(20, TimeUnit.SECONDS), "the admin agent never ran the holding task");
    }

    private void hold(final CountDownLatch held)
    {
        held.countDown();
        try
        {
            release.await(60, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private int port()
    {
        return broker.broker.address().getPort();
    }

    private long created(final String prefix)
    {
        return broker.broker.topics().topics().stream().filter(t -> t.name.startsWith(prefix)).count();
    }

    private static CreateTopicsRequestData createTopics(final String prefix, final int count, final int timeoutMs)
    {
        final List<CreateTopicsRequestData.CreatableTopic> topics = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            topics.add(new CreateTopicsRequestData.CreatableTopic().setName(prefix + i).setNumPartitions(1).setReplicationFactor((short)1));
        }
        return new CreateTopicsRequestData().setTimeoutMs(timeoutMs)
            .setTopics(new CreateTopicsRequestData.CreatableTopicCollection(topics.iterator()));
    }

    private static DeleteRecordsRequestData deleteRecords(final String topic, final long before, final int timeoutMs)
    {
        return new DeleteRecordsRequestData().setTimeoutMs(timeoutMs).setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic()
            .setName(topic).setPartitions(List.of(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0)
                .setOffset(before)))));
    }

    private static IncrementalAlterConfigsRequestData alterConfigs(final String topic, final String name, final String value,
        final boolean validateOnly)
    {
        final IncrementalAlterConfigsRequestData.AlterableConfigCollection configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
        configs.add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(name).setConfigOperation((byte)0).setValue(value));
        final IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection resources =
            new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
        resources.add(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte)2).setResourceName(topic)
            .setConfigs(configs));
        return new IncrementalAlterConfigsRequestData().setResources(resources).setValidateOnly(validateOnly);
    }

    private static MetadataResponseData metadata(final RawClient client, final String topic) throws Exception
    {
        return new MetadataResponseData(new ByteBufferAccessor(client.exchange(ApiKeys.METADATA, METADATA_V, new MetadataRequestData()
            .setAllowAutoTopicCreation(false).setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(topic))))),
            METADATA_V);
    }
}
