package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ArrayDecoder;
import io.ferrite.wire.message.StructDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * What ListOffsets and OffsetForLeaderEpoch share: a request of topics by name, each with partitions
 * that carry the client's current leader epoch, answered at once per partition in request order.
 * The walk is here: each topic and partition looked up once, and the error Kafka's leader answers
 * before it reads anything — a partition not found, a partition followed here, then a current leader
 * epoch other than the one this node leads at ({@link #error}). The API writes the topic's and each partition's answer, from that error or
 * from the partition's log when it is NONE.
 *
 * <p>The request's and the response's own names are given once, as method references in a
 * {@link Request} and an {@link ArrayResponse}: the walk allocates nothing per request. An API may
 * answer a request apart from the walk ({@link #answerApart}): ListOffsets one that names a
 * partition or a topic more than once.
 *
 * @param <T> the request's topic decoder
 * @param <P> the request's partition decoder
 * @param <A> the response's topic encoder
 */
abstract class PartitionOffsetsHandler<T extends ArrayDecoder<T>, P extends ArrayDecoder<P>, A> implements RequestHandler
{
    /**
     * An API's request decoder and where it keeps what the walk reads: its topics, each one's name
     * (offset and length of its UTF-8 bytes) and partitions, each partition's index and current
     * leader epoch.
     */
    record Request<R extends StructDecoder, T, P>(R decoder, Function<R, T> topics, ToIntFunction<T> nameOffset,
        ToIntFunction<T> nameLength, Function<T, P> partitions, ToIntFunction<P> partitionIndex, ToIntFunction<P> currentLeaderEpoch)
    {
        /** Wraps (walks and checks) the whole request; returns its topics. */
        T wrap(final DirectBuffer in, final int offset, final int limit, final short version)
        {
            decoder.wrap(in, offset, limit, version);
            return topics.apply(decoder);
        }

        /** The wrapped request's topics again, from the first. */
        T topicsAgain()
        {
            return topics.apply(decoder);
        }
    }

    /** Returned by {@link #answerApart} when the walk answers the request. */
    static final int WALK = Integer.MIN_VALUE;

    final TopicRegistry topics;
    final Request<?, T, P> request;
    private final ArrayResponse<?, A> response;

    PartitionOffsetsHandler(final TopicRegistry topics, final Request<?, T, P> request, final ArrayResponse<?, A> response)
    {
        this.topics = topics;
        this.request = request;
        this.response = response;
    }

    @Override
    public final int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final int apart = answerApart(request.wrap(in, offset, limit, version), in, version, out, outOffset, connection);
        if (apart != WALK)
        {
            return apart;
        }
        final T t = request.topicsAgain();
        final A answers = response.start(out, outOffset, version, t.elementCount());
        while (t.hasNext())
        {
            t.next();
            final Topic topic = topics.topic(in, request.nameOffset().applyAsInt(t), request.nameLength().applyAsInt(t));
            // Kafka checks DESCRIBE on the topic (ListOffsets; OffsetForLeaderEpoch from a client) before it looks at the partition
            final boolean authorized = Access.topic(connection, AclCodes.DESCRIBE, topic, in, request.nameOffset().applyAsInt(t),
                request.nameLength().applyAsInt(t));
            final P p = request.partitions().apply(t);
            topic(t, answers, p.elementCount());
            while (p.hasNext())
            {
                p.next();
                final int index = request.partitionIndex().applyAsInt(p);
                final Partition partition = PartitionLookup.partition(topic, index);
                partition(p, topic, partition, authorized ? error(topic, index, partition, request.currentLeaderEpoch().applyAsInt(p))
                    : Errors.TOPIC_AUTHORIZATION_FAILED);
            }
        }
        return outOffset + response.finish();
    }

    /**
     * The error Kafka's leader answers before it reads the log: the partition not found, else
     * {@link FetchOrigin#leaderCheck} (followed here, or another current leader epoch than the one led at).
     */
    static short error(final Topic topic, final int index, final Partition partition, final int currentLeaderEpoch)
    {
        return partition == null ? PartitionLookup.notFound(topic, false, index) : FetchOrigin.leaderCheck(partition, currentLeaderEpoch);
    }

    /**
     * Before the walk, with the wrapped request's topics ({@code t}, read from the first): writes the
     * whole response and returns where it ends when the API answers this request otherwise, else
     * {@link #WALK}. The walk (the default) answers every entry of the request, in its order.
     */
    int answerApart(final T t, final DirectBuffer in, final short version, final MutableDirectBuffer out, final int outOffset,
        final Connection connection)
    {
        return WALK;
    }

    /** For {@link #answerApart}: starts the response, declaring {@code count} topics. */
    final A startResponse(final MutableDirectBuffer out, final int outOffset, final short version, final int count)
    {
        return response.start(out, outOffset, version, count);
    }

    /** For {@link #answerApart}: ends the response started at {@code outOffset}; returns where it ends. */
    final int endResponse(final int outOffset)
    {
        return outOffset + response.finish();
    }

    /** Starts the next of the response's topics, {@code answers}, for request topic {@code t}, declaring its {@code partitions}. */
    abstract void topic(T t, A answers, int partitions);

    /**
     * Writes the response's entry for partition {@code p}: {@code error} when it is not NONE, else the
     * API's answer from {@code partition}'s log ({@code topic} is the topic it belongs to).
     */
    abstract void partition(P p, Topic topic, Partition partition, short error);
}
