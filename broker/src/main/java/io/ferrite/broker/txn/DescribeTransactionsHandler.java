package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
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

/** DescribeTransactions: each id's state as the coordinator holds it (TRANSACTIONAL_ID_NOT_FOUND for none). */
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
        return submit(connection, out, outOffset, (c, now) ->
            {
                final List<TxnQueries.Described> described = new ArrayList<>();
                ids.forEach(id -> described.add(c.describe(id)));
                return described;
            }, (o, at, described) -> write(o, at, version, ids, described, Errors.NONE),
            (o, at, error) -> write(o, at, version, ids, null, error));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<String> ids,
        final List<TxnQueries.Described> described, final short error)
    {
        final DescribeTransactionsResponseEncoder.TransactionState s = response.wrap(out, outOffset, version).throttleTimeMs(0)
            .transactionStates(ids.size());
        for (int i = 0; i < ids.size(); i++)
        {
            final TxnQueries.Described d = described == null ? null : described.get(i);
            final short e = d == null ? error : d.error();
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
            t.partitions().forEach(tp -> byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition()));
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
