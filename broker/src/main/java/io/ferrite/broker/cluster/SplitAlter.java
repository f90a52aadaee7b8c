package io.ferrite.broker.cluster;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.replication.ClusterNode;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestEncoder;
import io.ferrite.wire.message.IncrementalAlterConfigsResponseDecoder;
import io.ferrite.wire.message.IncrementalAlterConfigsResponseEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * An IncrementalAlterConfigs naming what the controller takes (every topic, the broker resources this node's checks
 * passed) and something else (a broker logger, a broker resource refused here), split as Kafka 4.4's broker splits what
 * it answers itself from what it forwards ({@code KafkaApis.handleIncrementalAlterConfigsRequest}): the forwarded part
 * goes to the controller in a request of its own, the rest is answered by this node's handler at once (it holds no
 * topic), and the client gets one answer, a result per resource in the request's order. Kafka's AdminClient sends such
 * requests: every resource without a node of its own (topics, the default broker) in one.
 */
final class SplitAlter
{
    /** Kafka's {@code ConfigResource.Type.TOPIC}. */
    static final byte TOPIC = 2;
    /** Kafka's {@code ConfigResource.Type.BROKER}. */
    static final byte BROKER = 4;
    private static final short UNKNOWN_SERVER_ERROR = -1;

    /** A config change of the request. */
    record Op(String name, byte operation, String value)
    {
    }

    /**
     * A resource of the request; {@code forwarded}: for the controller (a topic, internal ones included, or a broker
     * resource that passed this node's checks: {@link #brokersChecked}).
     */
    record Resource(byte type, String name, boolean forwarded, List<Op> ops)
    {
    }

    /** A resource's answer. */
    private record Result(short error, String message)
    {
    }

    private SplitAlter()
    {
    }

    /** The request's resources (the decoder wrapped on it). */
    static List<Resource> read(final IncrementalAlterConfigsRequestDecoder request)
    {
        final List<Resource> resources = new ArrayList<>();
        for (var r = request.resources(); r.hasNext(); )
        {
            r.next();
            final List<Op> ops = new ArrayList<>();
            for (var c = r.configs(); c.hasNext(); )
            {
                c.next();
                ops.add(new Op(c.name(), c.configOperation(), c.value()));
            }
            final String name = r.resourceName();
            resources.add(new Resource(r.resourceType(), name, r.resourceType() == TOPIC, ops));
        }
        return resources;
    }

    /**
     * {@code resources} with each broker resource (this node's id, or "" the cluster default) that passes this node's
     * checks marked forwarded: the controller writes it to the metadata log as Kafka's broker forwards it, and every
     * node applies it from the image. The checks are this node's own handler's, run validateOnly: Kafka's errors for
     * another node's id, a config that cannot change at run time, a bad value (Kafka's controller takes a broker
     * config it does not validate, so they must run before forwarding). One that fails stays local and this node's
     * handler answers it with the same error.
     */
    static List<Resource> brokersChecked(final List<Resource> resources, final short version, final RequestHandler local,
        final Connection connection)
    {
        final List<Resource> brokers = resources.stream().filter(r -> r.type() == BROKER).toList();
        if (brokers.isEmpty())
        {
            return resources;
        }
        final List<Result> checks = handleHere(brokers, true, version, local, connection);
        if (checks == null)
        {
            return resources;
        }
        final List<Resource> checked = new ArrayList<>(resources.size());
        int next = 0;
        for (final Resource r : resources)
        {
            checked.add(r.type() != BROKER ? r : new Resource(r.type(), r.name(), checks.get(next++).error() == 0, r.ops()));
        }
        return checked;
    }

    /** This node's handler's answers to {@code resources} (at once: no topic among them); null if it closes. */
    private static List<Result> handleHere(final List<Resource> resources, final boolean validateOnly, final short version,
        final RequestHandler local, final Connection connection)
    {
        final ExpandableArrayBuffer request = new ExpandableArrayBuffer(1024);
        final int length = encode(request, resources, validateOnly, version);
        final ExpandableArrayBuffer answer = new ExpandableArrayBuffer(1024);
        final int end = local.handle(ApiKeys.INCREMENTAL_ALTER_CONFIGS, version, request, 0, length, answer, 0, connection);
        if (end < 0)
        {
            return null; // CLOSE (a topic-free local part is never deferred)
        }
        final List<Result> results = new ArrayList<>();
        final IncrementalAlterConfigsResponseDecoder decoder = new IncrementalAlterConfigsResponseDecoder();
        decoder.wrap(answer, 0, end, version);
        for (var r = decoder.responses(); r.hasNext(); )
        {
            r.next();
            results.add(new Result(r.errorCode(), r.errorMessage()));
        }
        return results;
    }

    /**
     * Answers a mixed request: the local part at once into a buffer of its own, the forwarded part when the controller
     * answered, merged then by the connection's network thread.
     */
    static int answer(final List<Resource> resources, final boolean validateOnly, final short version,
        final RequestHandler local, final ClusterNode node, final Runnable waker, final MutableDirectBuffer out,
        final int outOffset, final Connection connection)
    {
        final List<Resource> here = resources.stream().filter(r -> !r.forwarded()).toList(); // no topic: read() forwards every one
        final List<Result> localResults = handleHere(here, validateOnly, version, local, connection);
        if (localResults == null)
        {
            return RequestHandler.CLOSE;
        }
        final ExpandableArrayBuffer forwarded = new ExpandableArrayBuffer(1024);
        final int forwardedLength = encode(forwarded, resources.stream().filter(Resource::forwarded).toList(), validateOnly,
            version);
        final CompletableFuture<ByteBuffer> controller = node.forward(ApiKeys.INCREMENTAL_ALTER_CONFIGS.id, version,
            ByteBuffer.wrap(forwarded.byteArray(), 0, forwardedLength));
        connection.defer(new Merged(controller, resources, localResults, version));
        controller.whenComplete((done, failure) -> waker.run());
        return RequestHandler.DEFERRED;
    }

    private static int encode(final MutableDirectBuffer into, final List<Resource> resources, final boolean validateOnly,
        final short version)
    {
        final IncrementalAlterConfigsRequestEncoder request = new IncrementalAlterConfigsRequestEncoder();
        request.wrap(into, 0, version);
        final var r = request.resources(resources.size());
        for (final Resource resource : resources)
        {
            r.next().resourceType(resource.type()).resourceName(resource.name());
            final var c = r.configs(resource.ops().size());
            for (final Op op : resource.ops())
            {
                c.next().name(op.name()).configOperation(op.operation()).value(op.value());
            }
        }
        request.validateOnly(validateOnly);
        return request.finish();
    }

    private static int write(final MutableDirectBuffer out, final int outOffset, final short version,
        final List<Resource> resources, final List<Result> results, final int throttleTimeMs)
    {
        final IncrementalAlterConfigsResponseEncoder response = new IncrementalAlterConfigsResponseEncoder();
        response.wrap(out, outOffset, version).throttleTimeMs(throttleTimeMs);
        final var r = response.responses(resources.size());
        for (int i = 0; i < resources.size(); i++)
        {
            r.next().errorCode(results.get(i).error()).errorMessage(results.get(i).message())
                .resourceType(resources.get(i).type()).resourceName(resources.get(i).name());
        }
        return outOffset + response.finish();
    }

    /** The controller's answer for the topics merged with this node's for the rest, in the request's order. */
    private static final class Merged implements PendingResponse
    {
        private final CompletableFuture<ByteBuffer> controller;
        private final List<Resource> resources;
        private final List<Result> localResults;
        private final short version;

        Merged(final CompletableFuture<ByteBuffer> controller, final List<Resource> resources, final List<Result> localResults,
            final short version)
        {
            this.controller = controller;
            this.resources = resources;
            this.localResults = localResults;
            this.version = version;
        }

        @Override
        public int poll(final Connection connection, final int outOffset, final long nowMs)
        {
            if (!controller.isDone())
            {
                return NOT_READY;
            }
            final ByteBuffer body = controller.getNow(null);
            if (body == null)
            {
                return RequestHandler.CLOSE; // ClusterNode.forward completes with an error response, never exceptionally
            }
            final Map<String, ArrayDeque<Result>> byResource = new HashMap<>();
            final IncrementalAlterConfigsResponseDecoder decoder = new IncrementalAlterConfigsResponseDecoder();
            decoder.wrap(new UnsafeBuffer(body), body.position(), body.limit(), version);
            final int throttleTimeMs = decoder.throttleTimeMs();
            for (var r = decoder.responses(); r.hasNext(); )
            {
                r.next();
                byResource.computeIfAbsent(r.resourceType() + "/" + r.resourceName(), name -> new ArrayDeque<>())
                    .add(new Result(r.errorCode(), r.errorMessage()));
            }
            final List<Result> results = new ArrayList<>(resources.size());
            int local = 0;
            for (final Resource resource : resources)
            {
                if (!resource.forwarded())
                {
                    results.add(localResults.get(local++));
                    continue;
                }
                final ArrayDeque<Result> answered = byResource.get(resource.type() + "/" + resource.name());
                results.add(answered == null || answered.isEmpty()
                    ? new Result(UNKNOWN_SERVER_ERROR, "no answer from the controller for this resource") : answered.poll());
            }
            return write(connection.out, outOffset, version, resources, results, throttleTimeMs);
        }

        @Override
        public long deadlineMs()
        {
            return Long.MAX_VALUE; // the controller channel times out itself (request.timeout.ms) and answers then
        }
    }
}
