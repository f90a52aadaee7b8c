package io.ferrite.broker.txn;

import io.ferrite.wire.message.ApiKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Exchanges to one node that share one request, as Kafka 4.4's inter-broker senders drain what is queued for a node into
 * one request ({@code TransactionMarkerChannelManager}: every marker queued for a broker in one WriteTxnMarkers;
 * {@code AddPartitionsToTxnManager}: every verification queued for a coordinator node in one AddPartitionsToTxn). A lane
 * of {@link NodeRequests} gets one from the exchange it takes ({@link NodeRequests.Exchange#request}) and adds those queued
 * behind it for the same node that {@link #fit}; the batch is then sent, answered and failed as one request:
 * {@link #answered} hands each member its own part of the answer, {@link #failed} fails each member (once each: a member's
 * callback that throws is logged and the others are still failed). On its lane's thread only.
 *
 * @param <E> the members' kind: an exchange of another kind never joins
 */
public abstract class RequestBatch<E extends NodeRequests.Exchange> implements NodeRequests.Request
{
    /** Whether an exchange queued behind the batch's members joins it now ({@link #fit}). */
    enum Fit
    {
        /** It joins. */
        JOINS,
        /** Not in this request (its key is in it already): it waits for the next, those behind it may still join. */
        LATER,
        /** The request is full (or it is of another kind): neither it nor those behind it join. */
        FULL
    }

    private static final Logger LOG = LoggerFactory.getLogger(RequestBatch.class);

    private final ApiKeys api;
    private final short version;
    private final Class<E> kind;
    private final List<E> members = new ArrayList<>();
    private final int budget;
    private int bytes;

    /**
     * A batch of {@code first} alone; others join while the sum of their {@link #bytes} stays within {@code budget} (the
     * request and its answer must fit the lane's frame: {@code first} is taken whatever its size; a request it makes
     * alone that does not fit the frame is not sent and fails alone, the lane going on with those queued behind it).
     */
    protected RequestBatch(final ApiKeys api, final short version, final Class<E> kind, final E first, final int budget)
    {
        this.api = api;
        this.version = version;
        this.kind = kind;
        this.budget = budget;
        members.add(first);
        bytes = bytes(first);
    }

    /** An upper bound of what {@code member} adds to the request and to its answer, in bytes (each counted alone). */
    protected abstract int bytes(E member);

    /**
     * Whether {@code member} can share the request with the members so far (say, not a second question of one id: that
     * one waits for the next request, and so does every later one of its key, which keeps their order).
     */
    protected abstract boolean joins(E member);

    /** Whether {@code next} can join now ({@link Fit#JOINS}: it is then {@link #add}ed). */
    final Fit fit(final NodeRequests.Exchange next)
    {
        if (!kind.isInstance(next) || bytes + bytes(kind.cast(next)) > budget)
        {
            return Fit.FULL;
        }
        return joins(kind.cast(next)) ? Fit.JOINS : Fit.LATER;
    }

    final void add(final NodeRequests.Exchange next)
    {
        final E member = kind.cast(next);
        members.add(member);
        bytes += bytes(member);
        added(member);
    }

    /** {@code member} joined (after the first, which the subclass's constructor has). */
    protected void added(final E member)
    {
    }

    /** The members, in the order they were queued. */
    protected final List<E> members()
    {
        return Collections.unmodifiableList(members);
    }

    @Override
    public final ApiKeys api()
    {
        return api;
    }

    @Override
    public final short version()
    {
        return version;
    }

    @Override
    public final void failed(final Exception cause)
    {
        for (final E member : members)
        {
            try
            {
                member.failed(cause);
            }
            catch (final RuntimeException ex)
            {
                LOG.error("A failed request's callback threw", ex);
            }
        }
    }
}
