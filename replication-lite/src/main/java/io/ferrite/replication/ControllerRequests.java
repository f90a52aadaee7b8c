package io.ferrite.replication;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.AllocateProducerIdsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatResponseData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.BrokerRegistrationResponseData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.controller.Controller;
import org.apache.kafka.controller.ControllerRequestContext;

/**
 * The controller APIs of the controller listener, handed to Kafka's {@link Controller} (what Kafka's
 * {@code ControllerApis} does for its controllers, without authorisation or quotas: Ferrite has neither yet).
 * A controller that is not the active one fails with NOT_CONTROLLER, which goes back in the answer: Kafka's
 * brokers and Admin then move to the active one. Every answer is a future the controller's own thread completes;
 * {@link RaftInbound}'s connection thread waits for it and writes it.
 */
final class ControllerRequests
{
    /** What is routed here; DescribeQuorum and the raft APIs stay KRaft's. */
    static final EnumSet<ApiKeys> APIS = EnumSet.of(ApiKeys.BROKER_REGISTRATION, ApiKeys.BROKER_HEARTBEAT,
        ApiKeys.ALTER_PARTITION, ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.CREATE_PARTITIONS,
        ApiKeys.ELECT_LEADERS, ApiKeys.ALTER_PARTITION_REASSIGNMENTS, ApiKeys.LIST_PARTITION_REASSIGNMENTS,
        ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.ALLOCATE_PRODUCER_IDS);

    private final Controller controller;
    /** A heartbeat not handled within this is answered REQUEST_TIMED_OUT: Kafka's {@code broker.heartbeat.interval.ms / 2}. */
    private final int heartbeatTimeoutMs;
    /** Told of heartbeats and of lost heartbeat connections ({@link CrashFencing}); null: crash fencing is off. */
    private volatile CrashSuspects crashSuspects;

    ControllerRequests(final Controller controller, final int heartbeatTimeoutMs)
    {
        this.controller = controller;
        this.heartbeatTimeoutMs = heartbeatTimeoutMs;
    }

    /** Tells {@code suspects} of every heartbeat and every lost heartbeat connection from now on (null: no more). */
    void watchCrashes(final CrashSuspects suspects)
    {
        this.crashSuspects = suspects;
    }

    /**
     * {@code heartbeat} arrived on a connection of the controller listener: the token that connection keeps for
     * {@link #heartbeatConnectionLost}, -1 when crash fencing is off.
     */
    long heartbeatArrived(final BrokerHeartbeatRequestData heartbeat)
    {
        final CrashSuspects suspects = crashSuspects;
        return suspects == null ? -1 :
            suspects.heartbeat(heartbeat.brokerId(), heartbeat.brokerEpoch(), heartbeat.currentMetadataOffset());
    }

    /** The connection whose last heartbeat was {@code broker}'s ({@code epoch}, {@code token}) ended. */
    void heartbeatConnectionLost(final int broker, final long epoch, final long token)
    {
        final CrashSuspects suspects = crashSuspects;
        if (suspects != null)
        {
            suspects.connectionLost(broker, epoch, token, TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));
        }
    }

    /** The answer to {@code request}, one of {@link #APIS}; a failure becomes the request's error answer. */
    CompletableFuture<ApiMessage> handle(final RequestHeader header, final AbstractRequest request)
    {
        CompletableFuture<? extends ApiMessage> answer;
        try
        {
            answer = dispatch(header, request);
        }
        catch (final RuntimeException ex)
        {
            answer = CompletableFuture.failedFuture(ex);
        }
        return answer.handle((message, failure) -> failure == null ? message :
            request.getErrorResponse(0, unwrap(failure)).data());
    }

    private CompletableFuture<? extends ApiMessage> dispatch(final RequestHeader header, final AbstractRequest request)
    {
        final ApiMessage data = request.data();
        switch (header.apiKey())
        {
            case BROKER_REGISTRATION:
                return controller.registerBroker(context(header, OptionalLong.empty()), (BrokerRegistrationRequestData)data)
                    .thenApply(reply -> new BrokerRegistrationResponseData().setBrokerEpoch(reply.epoch()));
            case BROKER_HEARTBEAT:
                // as Kafka's ControllerApis: a heartbeat that waited in a slow queue is stale, not handled late
                return controller.processBrokerHeartbeat(context(header, deadline(heartbeatTimeoutMs)), (BrokerHeartbeatRequestData)data)
                    .thenApply(reply -> new BrokerHeartbeatResponseData().setIsCaughtUp(reply.isCaughtUp())
                        .setIsFenced(reply.isFenced()).setShouldShutDown(reply.shouldShutDown()));
            case ALTER_PARTITION:
                return controller.alterPartition(context(header, OptionalLong.empty()), (AlterPartitionRequestData)data);
            case CREATE_TOPICS:
                return createTopics(header, (CreateTopicsRequestData)data);
            case DELETE_TOPICS:
                return deleteTopics(header, (DeleteTopicsRequestData)data);
            case CREATE_PARTITIONS:
                return createPartitions(header, (CreatePartitionsRequestData)data);
            case ELECT_LEADERS:
            {
                final ElectLeadersRequestData elect = (ElectLeadersRequestData)data;
                return controller.electLeaders(context(header, deadline(elect.timeoutMs())), elect);
            }
            case ALTER_PARTITION_REASSIGNMENTS:
            {
                final AlterPartitionReassignmentsRequestData alter = (AlterPartitionReassignmentsRequestData)data;
                return controller.alterPartitionReassignments(context(header, deadline(alter.timeoutMs())), alter);
            }
            case LIST_PARTITION_REASSIGNMENTS:
            {
                final ListPartitionReassignmentsRequestData list = (ListPartitionReassignmentsRequestData)data;
                return controller.listPartitionReassignments(context(header, deadline(list.timeoutMs())), list);
            }
            case INCREMENTAL_ALTER_CONFIGS:
                return incrementalAlterConfigs(header, (IncrementalAlterConfigsRequestData)data);
            case ALLOCATE_PRODUCER_IDS:
                // a broker's next block of producer ids (Kafka's RPCProducerIdManager asks): the controller checks the
                // broker epoch (STALE_BROKER_EPOCH) and commits a ProducerIdsRecord before it answers
                return controller.allocateProducerIds(context(header, OptionalLong.empty()), (AllocateProducerIdsRequestData)data);
            default:
                return CompletableFuture.failedFuture(Errors.UNSUPPORTED_VERSION.exception(
                    header.apiKey() + " is not served by the controller listener"));
        }
    }

    /*
     * The request checks below are those Kafka's ControllerApis makes before it hands a request to the controller,
     * which does not make them itself: two TopicRecords for one name, or two RemoveTopicRecords for one id, in one
     * batch fail the active controller's replay of its own records, a fatal fault that stops the node (and then the
     * next active one, which the client's retry reaches).
     */

    /** Names given twice: INVALID_REQUEST each, left out; {@code __cluster_metadata}: refused, as Kafka does. */
    private CompletableFuture<CreateTopicsResponseData> createTopics(final RequestHeader header,
        final CreateTopicsRequestData create)
    {
        final Set<String> names = new HashSet<>();
        final Set<String> duplicates = new HashSet<>();
        create.topics().forEach(topic ->
        {
            if (!duplicates.contains(topic.name()) && !names.add(topic.name()))
            {
                names.remove(topic.name());
                duplicates.add(topic.name());
            }
        });
        final boolean metadataTopic = names.remove(Topic.CLUSTER_METADATA_TOPIC_NAME);
        final CreateTopicsRequestData allowed = create.duplicate();
        allowed.topics().removeIf(topic -> !names.contains(topic.name()));
        return controller.createTopics(context(header, deadline(create.timeoutMs())), allowed, names, true)
            .thenApply(answer ->
            {
                duplicates.forEach(name -> answer.topics().add(new CreatableTopicResult().setName(name)
                    .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name.")));
                if (metadataTopic)
                {
                    answer.topics().add(new CreatableTopicResult().setName(Topic.CLUSTER_METADATA_TOPIC_NAME)
                        .setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Creation of internal topic " + Topic.CLUSTER_METADATA_TOPIC_NAME + " is prohibited."));
                }
                return answer;
            });
    }

    /**
     * A forwarded IncrementalAlterConfigs (a broker forwards those naming topics only, {@code ConfigsRouting}), as Kafka's
     * ControllerApis hands it to the controller, which validates the changes and writes the configs to the metadata log.
     */
    private CompletableFuture<IncrementalAlterConfigsResponseData> incrementalAlterConfigs(final RequestHeader header,
        final IncrementalAlterConfigsRequestData alter)
    {
        final Map<ConfigResource, Map<String, Map.Entry<AlterConfigOp.OpType, String>>> changes = new LinkedHashMap<>();
        for (final IncrementalAlterConfigsRequestData.AlterConfigsResource r : alter.resources())
        {
            final Map<String, Map.Entry<AlterConfigOp.OpType, String>> ops = new LinkedHashMap<>();
            for (final IncrementalAlterConfigsRequestData.AlterableConfig c : r.configs())
            {
                // a DELETE's value is null: an entry that allows it
                ops.put(c.name(), new AbstractMap.SimpleImmutableEntry<>(AlterConfigOp.OpType.forId(c.configOperation()), c.value()));
            }
            changes.put(new ConfigResource(ConfigResource.Type.forId(r.resourceType()), r.resourceName()), ops);
        }
        return controller.incrementalAlterConfigs(context(header, OptionalLong.empty()), changes, alter.validateOnly(), true)
            .thenApply(results ->
            {
                final IncrementalAlterConfigsResponseData answer = new IncrementalAlterConfigsResponseData();
                results.forEach((resource, error) -> answer.responses().add(
                    new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse().setErrorCode(error.error().code())
                        .setErrorMessage(error.message()).setResourceType(resource.type().id()).setResourceName(resource.name())));
                return answer;
            });
    }

    /** Names given twice: INVALID_REQUEST each (once), left out. */
    private CompletableFuture<CreatePartitionsResponseData> createPartitions(final RequestHeader header,
        final CreatePartitionsRequestData create)
    {
        final Set<String> names = new HashSet<>();
        final Set<String> duplicates = new HashSet<>();
        create.topics().forEach(topic ->
        {
            if (!names.add(topic.name()))
            {
                duplicates.add(topic.name());
            }
        });
        names.removeAll(duplicates);
        final CreatePartitionsResponseData answer = new CreatePartitionsResponseData();
        duplicates.forEach(name -> answer.results().add(new CreatePartitionsTopicResult().setName(name)
            .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name.")));
        final List<CreatePartitionsRequestData.CreatePartitionsTopic> topics = new ArrayList<>();
        names.forEach(name -> topics.add(create.topics().find(name)));
        return controller.createPartitions(context(header, deadline(create.timeoutMs())), topics, create.validateOnly())
            .thenApply(results ->
            {
                answer.results().addAll(results);
                return answer;
            });
    }

    /**
     * As Kafka's ControllerApis: a name or an id given twice is INVALID_REQUEST (once) and not deleted; an entry with
     * both or neither is INVALID_REQUEST; the ids given are looked up, then the names, and a name whose id was given
     * too is INVALID_REQUEST ("maps to an ID that was already supplied") and neither is deleted. The rest is deleted
     * by id, each id once.
     */
    private CompletableFuture<DeleteTopicsResponseData> deleteTopics(final RequestHeader header,
        final DeleteTopicsRequestData delete)
    {
        final ControllerRequestContext context = context(header, deadline(delete.timeoutMs()));
        final DeleteTopicsResponseData answer = new DeleteTopicsResponseData();
        final Set<String> names = new HashSet<>();
        final Set<String> duplicateNames = new HashSet<>();
        final Set<Uuid> ids = new HashSet<>();
        final Set<Uuid> duplicateIds = new HashSet<>();
        delete.topicNames().forEach(name -> provided(name, names, duplicateNames));
        delete.topics().forEach(topic ->
        {
            final boolean noId = Uuid.ZERO_UUID.equals(topic.topicId());
            if (topic.name() != null && noId)
            {
                provided(topic.name(), names, duplicateNames);
            }
            else if (topic.name() == null && !noId)
            {
                provided(topic.topicId(), ids, duplicateIds);
            }
            else
            {
                answer.responses().add(result(topic.name(), topic.topicId(), new ApiError(Errors.INVALID_REQUEST,
                    topic.name() == null ? "Neither topic name nor id were specified." :
                    "You may not specify both topic name and topic id.")));
            }
        });
        duplicateNames.forEach(name -> answer.responses().add(result(name, Uuid.ZERO_UUID,
            new ApiError(Errors.INVALID_REQUEST, "Duplicate topic name."))));
        duplicateIds.forEach(id -> answer.responses().add(result(null, id,
            new ApiError(Errors.INVALID_REQUEST, "Duplicate topic id."))));
        final Map<Uuid, String> toDelete = new LinkedHashMap<>();
        return controller.findTopicNames(context, ids).thenCompose(namesById ->
        {
            namesById.forEach((id, name) ->
            {
                if (name.isError())
                {
                    answer.responses().add(result(null, id, name.error()));
                }
                else
                {
                    toDelete.put(id, name.result());
                }
            });
            return controller.findTopicIds(context, names);
        }).thenCompose(idsByName ->
        {
            idsByName.forEach((name, id) ->
            {
                if (id.isError())
                {
                    answer.responses().add(result(name, Uuid.ZERO_UUID, id.error()));
                }
                else if (duplicateIds.contains(id.result()) || toDelete.containsKey(id.result()))
                {
                    toDelete.remove(id.result());
                    answer.responses().add(result(name, id.result(), new ApiError(Errors.INVALID_REQUEST,
                        "The provided topic name maps to an ID that was already supplied.")));
                }
                else
                {
                    toDelete.put(id.result(), name);
                }
            });
            return controller.deleteTopics(context, toDelete.keySet());
        }).thenApply(results ->
        {
            results.forEach((id, error) -> answer.responses().add(result(toDelete.get(id), id, error)));
            return answer;
        });
    }

    /** Adds {@code value} to {@code provided}, or moves it to {@code duplicates} if given before. */
    private static <T> void provided(final T value, final Set<T> provided, final Set<T> duplicates)
    {
        if (duplicates.contains(value) || !provided.add(value))
        {
            provided.remove(value);
            duplicates.add(value);
        }
    }

    private static DeleteTopicsResponseData.DeletableTopicResult result(final String name, final Uuid id, final ApiError error)
    {
        return new DeleteTopicsResponseData.DeletableTopicResult().setName(name).setTopicId(id)
            .setErrorCode(error.error().code()).setErrorMessage(error.message());
    }

    private static ControllerRequestContext context(final RequestHeader header, final OptionalLong deadlineNs)
    {
        return new ControllerRequestContext(header.data(), KafkaPrincipal.ANONYMOUS, deadlineNs);
    }

    private static OptionalLong deadline(final int timeoutMs)
    {
        return ControllerRequestContext.requestTimeoutMsToDeadlineNs(Time.SYSTEM, timeoutMs);
    }

    private static Throwable unwrap(final Throwable failure)
    {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
