package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import kafka.server.KafkaConfig;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AllocateProducerIdsRequestData;
import org.apache.kafka.common.message.AllocateProducerIdsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AllocateProducerIdsRequest;
import org.apache.kafka.common.requests.AllocateProducerIdsResponse;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.NodeToControllerChannelManagerImpl;
import org.apache.kafka.server.RaftControllerNodeProvider;
import org.apache.kafka.server.common.ControllerRequestCompletionHandler;

/**
 * The broker's channel to the active controller for what a broker sends it besides its heartbeats (those are
 * {@link BrokerMembership}'s): the client requests Kafka's broker forwards (CreateTopics, DeleteTopics,
 * CreatePartitions, ...), the leader's AlterPartition and the AllocateProducerIds of InitProducerId's ids, as Kafka's {@code ForwardingManager} and
 * {@code AlterPartitionManager} send them: Kafka's {@link NodeToControllerChannelManagerImpl} ("forwarding"), which
 * follows the raft leader and sends again on NOT_CONTROLLER until {@code request.timeout.ms} (30 s) passed.
 *
 * <p>Kafka wraps a forwarded request in an Envelope (KIP-590) to carry the client's principal; Ferrite has no
 * authentication, and the controller listener ({@link ControllerRequests}) takes the request itself.
 *
 * <p>Threads: {@code broker-N-to-controller-forwarding-channel-manager}; completions run on it.
 */
final class ControllerChannel implements AutoCloseable
{
    private final NodeToControllerChannelManagerImpl channel;
    private final Metrics metrics;

    private ControllerChannel(final NodeToControllerChannelManagerImpl channel, final Metrics metrics)
    {
        this.channel = channel;
        this.metrics = metrics;
    }

    static ControllerChannel start(final MetadataQuorum quorum, final Map<String, String> settings,
        final InetSocketAddress advertised, final Path logDir)
    {
        final KafkaConfig config = NodeConfig.broker(quorum, settings, advertised, logDir);
        final Metrics metrics = new Metrics();
        try
        {
            final NodeToControllerChannelManagerImpl channel = new NodeToControllerChannelManagerImpl(
                RaftControllerNodeProvider.create(quorum.raftManager(), config), Time.SYSTEM, metrics, config,
                "forwarding", "broker-" + quorum.nodeId() + "-", (long)config.requestTimeoutMs());
            channel.start();
            return new ControllerChannel(channel, metrics);
        }
        catch (final RuntimeException | Error ex)
        {
            metrics.close(); // not left behind by a start that failed
            throw ex;
        }
    }

    /** {@code body} (a request body of {@code apiKey} at {@code version}) to the controller; its answer at that version. */
    CompletableFuture<ByteBuffer> forward(final short apiKey, final short version, final ByteBuffer body)
    {
        final ApiKeys api = ApiKeys.forId(apiKey);
        final AbstractRequest request = AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(body)).request;
        final CompletableFuture<ByteBuffer> sent = new CompletableFuture<>();
        channel.sendRequest(new AbstractRequest.Builder<>(api, version, version)
        {
            @Override
            public AbstractRequest build(final short ignored)
            {
                return request;
            }
        }, new Completion(sent, response -> body(response.responseBody(), version)));
        // a failure (timed out, no controller) is answered as Kafka's broker does: the request's error response
        return sent.exceptionally(failure -> body(request.getErrorResponse(0, failure), version));
    }

    /**
     * Kafka's auto-creation by a broker (its {@code AutoTopicCreationManager}): a CreateTopics of {@code topic} with
     * the controller's defaults ({@code num.partitions}, {@code default.replication.factor}); the answer is not waited
     * for by the Metadata request that asked (LEADER_NOT_AVAILABLE meanwhile; the client asks again).
     */
    void autoCreate(final String topic)
    {
        final org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection topics =
            new org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection();
        topics.add(new org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic().setName(topic)
            .setNumPartitions(-1).setReplicationFactor((short)-1));
        channel.sendRequest(new org.apache.kafka.common.requests.CreateTopicsRequest.Builder(
            new org.apache.kafka.common.message.CreateTopicsRequestData().setTopics(topics).setTimeoutMs(30_000)),
            new Completion(new CompletableFuture<>(), response -> null));
    }

    /**
     * Kafka's creation of an internal topic by a broker (its {@code AutoTopicCreationManager} for
     * {@code __consumer_offsets}): a CreateTopics of {@code topic} with these partitions, replication factor and
     * configs; completes with the topic's error code in the controller's answer (NONE, TOPIC_ALREADY_EXISTS,
     * INVALID_REPLICATION_FACTOR, ...), or fails when no controller answered.
     */
    CompletableFuture<Short> createTopic(final String topic, final int partitions, final short replicationFactor,
        final java.util.Map<String, String> configs)
    {
        final org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfigCollection creatableConfigs =
            new org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfigCollection();
        configs.forEach((name, value) -> creatableConfigs.add(
            new org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfig().setName(name).setValue(value)));
        final org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection topics =
            new org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection();
        topics.add(new org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic().setName(topic)
            .setNumPartitions(partitions).setReplicationFactor(replicationFactor).setConfigs(creatableConfigs));
        final CompletableFuture<Short> answer = new CompletableFuture<>();
        channel.sendRequest(new org.apache.kafka.common.requests.CreateTopicsRequest.Builder(
            new org.apache.kafka.common.message.CreateTopicsRequestData().setTopics(topics).setTimeoutMs(30_000)),
            new Completion(answer, response ->
            {
                final org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult result =
                    ((org.apache.kafka.common.requests.CreateTopicsResponse)response.responseBody()).data().topics().find(topic);
                return result == null ? Errors.UNKNOWN_SERVER_ERROR.code() : result.errorCode();
            }));
        return answer;
    }

    private static ByteBuffer body(final AbstractResponse response, final short version)
    {
        return MessageUtil.toByteBufferAccessor(response.data(), version).buffer(); // rewound: the whole body
    }

    /**
     * Kafka's AlterPartition for one partition; the state the controller committed (leader epoch, partition epoch,
     * ISR), or its error as an exception.
     */
    CompletableFuture<ClusterNode.IsrAnswer> alterPartition(final int brokerId, final long brokerEpoch, final Uuid topicId,
        final int partition, final int leaderEpoch, final int partitionEpoch, final int[] isr, final long[] epochs)
    {
        final AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData()
            .setPartitionIndex(partition).setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch);
        final List<AlterPartitionRequestData.BrokerState> members = new java.util.ArrayList<>();
        for (int i = 0; i < isr.length; i++)
        {
            members.add(new AlterPartitionRequestData.BrokerState().setBrokerId(isr[i]).setBrokerEpoch(epochs[i]));
        }
        data.setNewIsrWithEpochs(members);
        final AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(brokerId)
            .setBrokerEpoch(brokerEpoch)
            .setTopics(List.of(new AlterPartitionRequestData.TopicData().setTopicId(topicId).setPartitions(List.of(data))));
        final CompletableFuture<ClusterNode.IsrAnswer> answer = new CompletableFuture<>();
        channel.sendRequest(new AlterPartitionRequest.Builder(request), new Completion(answer, response ->
        {
            final AlterPartitionResponseData body = ((AlterPartitionResponse)response.responseBody()).data();
            final Errors top = Errors.forCode(body.errorCode());
            if (top != Errors.NONE)
            {
                throw top.exception();
            }
            final AlterPartitionResponseData.PartitionData result = body.topics().get(0).partitions().get(0);
            final Errors error = Errors.forCode(result.errorCode());
            if (error != Errors.NONE)
            {
                throw error.exception();
            }
            return new ClusterNode.IsrAnswer(result.leaderEpoch(), result.partitionEpoch(),
                result.isr().stream().mapToInt(Integer::intValue).toArray());
        }));
        return answer;
    }

    /**
     * Kafka's AllocateProducerIds: the next block of producer ids for broker {@code brokerId} at {@code brokerEpoch}, as
     * {@code {first id, length}}; the controller's error as an exception (STALE_BROKER_EPOCH, NOT_CONTROLLER once the
     * channel's own retries ran out, ...).
     */
    CompletableFuture<long[]> allocateProducerIds(final int brokerId, final long brokerEpoch)
    {
        final CompletableFuture<long[]> answer = new CompletableFuture<>();
        channel.sendRequest(new AllocateProducerIdsRequest.Builder(new AllocateProducerIdsRequestData()
            .setBrokerId(brokerId).setBrokerEpoch(brokerEpoch)), new Completion(answer, response ->
        {
            final AllocateProducerIdsResponseData body = ((AllocateProducerIdsResponse)response.responseBody()).data();
            final Errors error = Errors.forCode(body.errorCode());
            if (error != Errors.NONE)
            {
                throw error.exception();
            }
            return new long[] {body.producerIdStart(), body.producerIdLen()};
        }));
        return answer;
    }

    @Override
    public void close() throws InterruptedException
    {
        channel.shutdown();
        metrics.close();
    }

    /** Completes {@code answer} from a response, or fails it (timed out, disconnected for good, version mismatch). */
    private static final class Completion implements ControllerRequestCompletionHandler
    {
        private final CompletableFuture<?> answer;
        private final java.util.function.Function<ClientResponse, ?> read;

        <T> Completion(final CompletableFuture<T> answer, final java.util.function.Function<ClientResponse, T> read)
        {
            this.answer = answer;
            this.read = read;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void onComplete(final ClientResponse response)
        {
            try
            {
                if (response.versionMismatch() != null)
                {
                    answer.completeExceptionally(response.versionMismatch());
                }
                else if (!response.hasResponse())
                {
                    answer.completeExceptionally(Errors.NETWORK_EXCEPTION.exception("no answer from the controller"));
                }
                else
                {
                    ((CompletableFuture<Object>)answer).complete(read.apply(response));
                }
            }
            catch (final RuntimeException ex)
            {
                answer.completeExceptionally(ex);
            }
        }

        @Override
        public void onTimeout()
        {
            answer.completeExceptionally(Errors.REQUEST_TIMED_OUT.exception("the controller did not answer within " +
                "request.timeout.ms"));
        }
    }
}
