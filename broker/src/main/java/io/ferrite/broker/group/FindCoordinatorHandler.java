package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.Errors;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.FindCoordinatorRequestDecoder;
import io.ferrite.wire.message.FindCoordinatorResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.concurrent.CompletableFuture;

/**
 * FindCoordinator: this node for every group and every transactional id (an empty one too, as
 * Kafka 4.4) — in a cluster, a group's is the leader of its {@code __consumer_offsets} partition
 * ({@link GroupOwnership}), a transactional id's of its {@code __transaction_state} one; other key types (share groups') are INVALID_REQUEST. The first one for a group has the admin agent create
 * {@code __consumer_offsets}, the first for a transactional id {@code __transaction_state}, and is
 * answered once it exists.
 */
final class FindCoordinatorHandler implements RequestHandler
{
    private static final byte GROUP_KEY = 0;
    private static final byte TRANSACTION_KEY = 1;

    private final GroupCoordinator coordinator;
    private final TxnCoordinator transactions;
    /** This network thread's wake-up, run when the offsets topic's creation ends. */
    private final Runnable waker;
    private final int nodeId;
    private final MetadataHandler address;
    private final FindCoordinatorRequestDecoder request = new FindCoordinatorRequestDecoder();
    private final FindCoordinatorResponseEncoder response = new FindCoordinatorResponseEncoder();

    FindCoordinatorHandler(final GroupCoordinator coordinator, final TxnCoordinator transactions, final Runnable waker,
        final int nodeId, final MetadataHandler address)
    {
        this.coordinator = coordinator;
        this.transactions = transactions;
        this.waker = waker;
        this.nodeId = nodeId;
        this.address = address;
    }

    /**
     * A group's or transactional id's key, empty too, is this node's: Kafka 4.4 answers an empty key NONE
     * with its address, for both key types and at every version (checked against a running 4.4 node);
     * nothing is written for a FindCoordinator, and the empty id's requests get their own errors.
     */
    private static short error(final byte keyType, final String key, final Connection connection)
    {
        // Kafka checks DESCRIBE on the group or the transactional id first
        if (keyType == GROUP_KEY)
        {
            return Access.group(connection, AclCodes.DESCRIBE, key) ? Errors.NONE : Errors.GROUP_AUTHORIZATION_FAILED;
        }
        if (keyType == TRANSACTION_KEY)
        {
            return Access.transactionalId(connection, AclCodes.DESCRIBE, key) ? Errors.NONE : Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        return Errors.INVALID_REQUEST;
    }

    /**
     * The coordinator of a key: this node, but in a cluster the leader of its partition of {@code __consumer_offsets}
     * (a group) or {@code __transaction_state} (a transactional id) ({@link PartitionOwnership.Locator}:
     * COORDINATOR_NOT_AVAILABLE while the topic is being created or the partition has no leader); INVALID_REQUEST for
     * another key type.
     */
    private PartitionOwnership.Located locate(final byte keyType, final String key, final Connection connection)
    {
        final short error = error(keyType, key, connection);
        if (error != Errors.NONE)
        {
            return new PartitionOwnership.Located(error, -1, "", -1);
        }
        final PartitionOwnership.Locator locator = keyType == GROUP_KEY ? coordinator.ownership().locator() :
            transactions.ownership().locator();
        return locator != null ? locator.locate(key) :
            new PartitionOwnership.Located(Errors.NONE, nodeId, address.advertisedHost(connection), address.advertisedPort(connection));
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final byte keyType = version >= 1 ? request.keyType() : GROUP_KEY;
        final CompletableFuture<?> creating = keyType == GROUP_KEY ? coordinator.offsetsTopicWanted() :
            keyType == TRANSACTION_KEY ? transactions.topicWanted() : null;
        if (creating != null && !creating.isDone())
        {
            // the admin agent creates __consumer_offsets (Kafka creates it on the first FindCoordinator and
            // answers COORDINATOR_NOT_AVAILABLE meanwhile); this answer waits for it, its connection only,
            // so that the group's first write finds it and no network thread waits for the agent
            final WaitForOffsetsTopic waiting = new WaitForOffsetsTopic(creating, in, offset, limit, version);
            connection.defer(waiting);
            creating.whenComplete((topic, failure) -> waker.run());
            return DEFERRED;
        }
        return answer(in, offset, limit, version, out, outOffset, connection);
    }

    private int answer(final DirectBuffer in, final int offset, final int limit, final short version, final MutableDirectBuffer out,
        final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final byte keyType = version >= 1 ? request.keyType() : GROUP_KEY;
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (version < 4)
        {
            final PartitionOwnership.Located at = locate(keyType, request.key(), connection);
            response.errorCode(at.error()).errorMessage(at.error() == Errors.NONE ? null
                : Access.message(at.error()) != null ? Access.message(at.error()) : "The coordinator is not available.")
                .nodeId(at.nodeId()).host(at.host()).port(at.port());
        }
        else
        {
            final StringArrayDecoder keys = request.coordinatorKeys();
            final FindCoordinatorResponseEncoder.Coordinator c = response.coordinators(keys.elementCount());
            while (keys.hasNext())
            {
                final String key = keys.next().value();
                final PartitionOwnership.Located at = locate(keyType, key, connection);
                c.next().key(key).nodeId(at.nodeId()).host(at.host()).port(at.port()).errorCode(at.error())
                    .errorMessage((CharSequence)null);
            }
        }
        return outOffset + response.finish();
    }

    /** The answer once the offsets topic's creation ended (either way), from the request's bytes still in the input. */
    private final class WaitForOffsetsTopic implements PendingResponse
    {
        private final CompletableFuture<?> creating;
        private final DirectBuffer in;
        private final int offset;
        private final int limit;
        private final short version;

        WaitForOffsetsTopic(final CompletableFuture<?> creating, final DirectBuffer in, final int offset, final int limit,
            final short version)
        {
            this.creating = creating;
            this.in = in;
            this.offset = offset;
            this.limit = limit;
            this.version = version;
        }

        @Override
        public int poll(final Connection connection, final int outOffset, final long nowMs)
        {
            return creating.isDone() ? answer(in, offset, limit, version, connection.out, outOffset, connection) : NOT_READY;
        }

        @Override
        public long deadlineMs()
        {
            return Long.MAX_VALUE; // the agent always ends a creation, and wakes this thread then
        }
    }
}
