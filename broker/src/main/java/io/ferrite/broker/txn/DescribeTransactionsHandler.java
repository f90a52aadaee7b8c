package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.ArrayEncoder;
import io.ferrite.wire.message.DescribeTransactionsRequestDecoder;
import io.ferrite.wire.message.DescribeTransactionsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * DescribeTransactions: each id's state as the coordinator holds it (TRANSACTIONAL_ID_NOT_FOUND for none). With an
 * authorizer, as Kafka 4.4: an id the principal may not DESCRIBE is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (not read), and
 * a topic it may not DESCRIBE is left out of a transaction's partitions.
 */
final class DescribeTransactionsHandler extends CoordinatorApiHandler<TxnCoordinator, DescribeTransactionsRequestDecoder>
{
    private final DescribeTransactionsResponseEncoder response = new DescribeTransactionsResponseEncoder();

    DescribeTransactionsHandler(final TxnCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, coordinator.agent(), waker, new DescribeTransactionsRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<String> ids = new ArrayList<>();
        final StringArrayDecoder asked = request.transactionalIds();
        while (asked.hasNext())
        {
            ids.add(asked.next().value());
        }
        final boolean[] refused = new boolean[ids.size()];
        for (int i = 0; i < refused.length; i++)
        {
            refused[i] = !Access.transactionalId(connection, AclCodes.DESCRIBE, ids.get(i));
        }
        return submit(connection, out, outOffset, (c, now) ->
            {
                final List<TxnQueries.Described> described = new ArrayList<>();
                for (int i = 0; i < refused.length; i++)
                {
                    described.add(refused[i] ? null : c.describe(ids.get(i)));
                }
                return described;
            }, (o, at, described) -> write(o, at, version, ids, described, refused, Errors.NONE, connection),
            (o, at, error) -> write(o, at, version, ids, null, refused, error, connection));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<String> ids,
        final List<TxnQueries.Described> described, final boolean[] refused, final short error, final Connection connection)
    {
        final DescribeTransactionsResponseEncoder.TransactionState s = response.wrap(out, outOffset, version).throttleTimeMs(0)
            .transactionStates(ids.size());
        for (int i = 0; i < ids.size(); i++)
        {
            final TxnQueries.Described d = described == null ? null : described.get(i);
            final short e = refused[i] ? Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : d == null ? error : d.error();
            s.next().errorCode(e).transactionalId(ids.get(i));
            if (e != Errors.NONE)
            {
                s.transactionState("").transactionTimeoutMs(0).transactionStartTimeMs(-1).producerId(-1).producerEpoch((short)-1).topics(0);
                continue;
            }
            final TxnTransit t = d.state();
            s.transactionState(t.state().stateName()).transactionTimeoutMs(t.timeoutMs()).transactionStartTimeMs(t.startTimestamp())
                .producerId(t.producerId()).producerEpoch(t.producerEpoch());
            final Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
            t.partitions().forEach(tp ->
            {
                if (Access.topic(connection, AclCodes.DESCRIBE, tp.topic()))
                {
                    byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
                }
            });
            final DescribeTransactionsResponseEncoder.TopicData topics = s.topics(byTopic.size());
            for (final Map.Entry<String, List<Integer>> e2 : byTopic.entrySet())
            {
                final ArrayEncoder partitions = topics.next().topic(e2.getKey()).partitions(e2.getValue().size());
                for (final int p : e2.getValue())
                {
                    partitions.addInt32(p);
                }
            }
        }
        return outOffset + response.finish();
    }
}
