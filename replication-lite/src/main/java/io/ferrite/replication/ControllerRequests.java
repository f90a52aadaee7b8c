package io.ferrite.replication;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatResponseData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.BrokerRegistrationResponseData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
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
import org.apache.kafka.controller.ResultOrError;

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
        ApiKeys.ELECT_LEADERS, ApiKeys.ALTER_PARTITION_REASSIGNMENTS, ApiKeys.LIST_PARTITION_REASSIGNMENTS);

    private final Controller controller;

    ControllerRequests(final Controller controller)
    {
        this.controller = controller;
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
                return controller.processBrokerHeartbeat(context(header, OptionalLong.empty()), (BrokerHeartbeatRequestData)data)
                    .thenApply(reply -> new BrokerHeartbeatResponseData().setIsCaughtUp(reply.isCaughtUp())
                        .setIsFenced(reply.isFenced()).setShouldShutDown(reply.shouldShutDown()));
            case ALTER_PARTITION:
                return controller.alterPartition(context(header, OptionalLong.empty()), (AlterPartitionRequestData)data);
            case CREATE_TOPICS:
            {
                final CreateTopicsRequestData create = (CreateTopicsRequestData)data;
                final Set<String> names = new HashSet<>();
                create.topics().forEach(topic -> names.add(topic.name()));
                return controller.createTopics(context(header, deadline(create.timeoutMs())), create, names, true);
            }
            case DELETE_TOPICS:
                return deleteTopics(header, (DeleteTopicsRequestData)data);
            case CREATE_PARTITIONS:
            {
                final CreatePartitionsRequestData create = (CreatePartitionsRequestData)data;
                return controller.createPartitions(context(header, deadline(create.timeoutMs())),
                    new ArrayList<>(create.topics()), create.validateOnly())
                    .thenApply(results -> new CreatePartitionsResponseData().setResults(results));
            }
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
            default:
                return CompletableFuture.failedFuture(Errors.UNSUPPORTED_VERSION.exception(
                    header.apiKey() + " is not served by the controller listener"));
        }
    }

    /** Names are looked up first (the controller deletes by id), then the ids given and found are deleted. */
    private CompletableFuture<DeleteTopicsResponseData> deleteTopics(final RequestHeader header,
        final DeleteTopicsRequestData delete)
    {
        final ControllerRequestContext context = context(header, deadline(delete.timeoutMs()));
        final List<String> names = new ArrayList<>(delete.topicNames());
        final List<Uuid> ids = new ArrayList<>();
        delete.topics().forEach(topic ->
        {
            if (topic.name() != null)
            {
                names.add(topic.name());
            }
            else
            {
                ids.add(topic.topicId());
            }
        });
        final DeleteTopicsResponseData answer = new DeleteTopicsResponseData();
        return controller.findTopicIds(context, names).thenCompose(found ->
        {
            for (final Map.Entry<String, ResultOrError<Uuid>> entry : found.entrySet())
            {
                if (entry.getValue().isError())
                {
                    answer.responses().add(result(entry.getKey(), Uuid.ZERO_UUID, entry.getValue().error()));
                }
                else
                {
                    ids.add(entry.getValue().result());
                }
            }
            return controller.findTopicNames(context, ids).thenCompose(namesById ->
                controller.deleteTopics(context, ids).thenApply(results ->
                {
                    results.forEach((id, error) ->
                    {
                        final ResultOrError<String> name = namesById.get(id);
                        answer.responses().add(result(name == null || name.isError() ? null : name.result(), id, error));
                    });
                    return answer;
                }));
        });
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
