package io.ferrite.broker.coordinator;

import io.ferrite.broker.acl.Access;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.StructDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * What every API handler that hands its work to the coordinators' agent shares: the coordinator it
 * works on, the agent, its network thread's wake-up, the request's flyweight (one per handler, as
 * each network thread has its own handlers) wrapped before {@link #handle(short, MutableDirectBuffer, int, Connection)},
 * and {@link #submit}.
 *
 * @param <C> the coordinator the calls' work runs on
 * @param <Q> the request's decoder
 */
public abstract class CoordinatorApiHandler<C, Q extends StructDecoder> implements RequestHandler
{
    protected final C coordinator;
    protected final CoordinatorAgent agent;
    /** This network thread's wake-up, run by the agent when a call's answer is ready. */
    protected final Runnable waker;
    /** The request, wrapped (and so checked whole) before {@link #handle(short, MutableDirectBuffer, int, Connection)}. */
    protected final Q request;

    protected CoordinatorApiHandler(final C coordinator, final CoordinatorAgent agent, final Runnable waker, final Q request)
    {
        this.coordinator = coordinator;
        this.agent = agent;
        this.waker = waker;
        this.request = request;
    }

    @Override
    public final int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        return handle(version, out, outOffset, connection);
    }

    /** Answers the request in {@link #request}, at once or deferred ({@link #submit}); as {@link RequestHandler#handle}. */
    protected abstract int handle(short version, MutableDirectBuffer out, int outOffset, Connection connection);

    /**
     * {@link #submit} once the connection's principal may do {@code operation} on the resource ({@code acl.AclCodes}),
     * else answered at once by {@code refusal} with {@code denied} — Kafka's KafkaApis checks before its coordinator runs.
     */
    protected final <R> int submitAllowed(final byte operation, final byte resourceType, final String name, final short denied,
        final Connection connection, final MutableDirectBuffer out, final int outOffset, final CoordinatorCall.Work<C, R> work,
        final CoordinatorCall.Writer<R> writer, final CoordinatorCall.Refusal refusal)
    {
        if (!Access.allowed(connection, operation, resourceType, name))
        {
            return refusal.write(out, outOffset, denied);
        }
        return submit(connection, out, outOffset, work, writer, refusal);
    }

    /** {@link CoordinatorCall#submit} to this handler's coordinator, woken by this handler's waker. */
    protected final <R> int submit(final Connection connection, final MutableDirectBuffer out, final int outOffset,
        final CoordinatorCall.Work<C, R> work, final CoordinatorCall.Writer<R> writer, final CoordinatorCall.Refusal refusal)
    {
        return CoordinatorCall.submit(agent, coordinator, connection, waker, out, outOffset, work, writer, refusal);
    }
}
