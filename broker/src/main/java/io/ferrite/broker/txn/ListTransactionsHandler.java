package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.ArrayEncoder;
import io.ferrite.wire.message.ListTransactionsRequestDecoder;
import io.ferrite.wire.message.ListTransactionsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * ListTransactions (v0-2): the coordinator's transactions, filtered by state, producer id, duration (v1) and id pattern (v2);
 * with an authorizer, as Kafka 4.4, only the transactional ids the principal may DESCRIBE.
 */
final class ListTransactionsHandler extends CoordinatorApiHandler<TxnCoordinator, ListTransactionsRequestDecoder>
{
    private final ListTransactionsResponseEncoder response = new ListTransactionsResponseEncoder();

    ListTransactionsHandler(final TxnCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, coordinator.agent(), waker, new ListTransactionsRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<String> states = new ArrayList<>();
        final StringArrayDecoder s = request.stateFilters();
        while (s.hasNext())
        {
            states.add(s.next().value());
        }
        final Set<Long> producerIds = new HashSet<>();
        for (int i = 0; i < request.producerIdFiltersCount(); i++)
        {
            producerIds.add(request.producerIdFilters(i));
        }
        final long duration = version >= 1 ? request.durationFilter() : -1;
        final String pattern = version >= 2 && !request.transactionalIdPatternIsNull() ? request.transactionalIdPattern() : null;
        return submit(connection, out, outOffset, (c, now) -> c.list(producerIds, states, duration, pattern),
            (o, at, listing) -> write(o, at, version, visible(connection, listing)), (o, at, error) -> write(o, at, version,
                new TxnQueries.Listing(error, List.of(), List.of())));
    }

    /** The listing without the transactional ids the principal may not DESCRIBE (Kafka leaves them out, no error). */
    private static TxnQueries.Listing visible(final Connection connection, final TxnQueries.Listing listing)
    {
        if (!Access.enabled(connection))
        {
            return listing;
        }
        final List<TxnQueries.Listed> visible = new ArrayList<>();
        for (final TxnQueries.Listed l : listing.transactions())
        {
            if (Access.transactionalId(connection, AclCodes.DESCRIBE, l.transactionalId()))
            {
                visible.add(l);
            }
        }
        return new TxnQueries.Listing(listing.error(), listing.unknownStateFilters(), visible);
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final TxnQueries.Listing listing)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(listing.error());
        final ArrayEncoder unknown = response.unknownStateFilters(listing.unknownStateFilters().size());
        listing.unknownStateFilters().forEach(unknown::addString);
        final boolean ok = listing.error() == Errors.NONE;
        final ListTransactionsResponseEncoder.TransactionState t = response.transactionStates(ok ? listing.transactions().size() : 0);
        for (int i = 0; ok && i < listing.transactions().size(); i++)
        {
            final TxnQueries.Listed l = listing.transactions().get(i);
            t.next().transactionalId(l.transactionalId()).producerId(l.producerId()).transactionState(l.stateName());
        }
        return outOffset + response.finish();
    }
}
