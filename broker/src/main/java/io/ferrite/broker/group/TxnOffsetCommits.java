package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.txn.AddPartitionsRules;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.broker.txn.TxnPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * TxnOffsetCommit on the coordinators' agent, as Kafka 4.4's {@code GroupCoordinatorService
 * .commitTransactionalOffsets} runs it: first the transaction is verified to hold the group's
 * {@code __consumer_offsets} partition (Kafka's {@code AddPartitionsToTxnManager}, here a call into
 * the transaction coordinator on the same agent): v0-3 verify only, a partition not in the
 * transaction INVALID_TXN_STATE; v4 verify only, TRANSACTION_ABORTABLE; v5+ add it as
 * AddPartitionsToTxn would (TV2 clients send no AddOffsetsToTxn), waiting for that record's write.
 * While the transaction's last EndTxn completes the add is answered CONCURRENT_TRANSACTIONS at once, as Kafka 4.4
 * answers it (its coordinator's verification, {@code ReplicaManager.maybeSendPartitionToTransactionCoordinator}, has no
 * retry: only a produce's add is held, in {@code handleProduceAppend}, javap), here and on the remote path below; the
 * client sends the commit again after {@code retry.backoff.ms} (kafka-clients: a retriable error).
 * PRODUCER_FENCED comes back as INVALID_PRODUCER_EPOCH; the other errors as Kafka's operation helper turns them. Then the group's checks (a transactional
 * commit's: no REBALANCE_IN_PROGRESS, a commit without member or generation allowed), then the
 * offsets as one transactional batch of the producer (its id and epoch, Kafka's append origin
 * COORDINATOR) through the partition's log thread; once it is answered OK they are pending in
 * {@link TxnOffsets} until the transaction's marker. The verification (again, for v5+) and the
 * write's send are one step on the agent: the transaction's markers are sent from the same agent, so
 * a marker ending this transaction goes to the log thread after the batch, never before (a batch
 * after its transaction's marker would open a transaction no coordinator ends). In a cluster, when the transactional
 * id's coordinator is another node, that node verifies or adds the partition ({@link RemoteTxnCheck}) and the group's
 * checks and the write follow its answer, one step later, after asking again whether this node still coordinates the group.
 */
final class TxnOffsetCommits
{
    /** A TxnOffsetCommit's asked values (the partitions that passed their own checks). */
    record Asked(String transactionalId, String groupId, long producerId, short producerEpoch, int generationId, String memberId,
        String groupInstanceId, short version, Map<Group.TopicPartition, OffsetCommits.Asked> offsets)
    {
    }

    private TxnOffsetCommits()
    {
    }

    /**
     * Starts the commit (on the agent): its answer once {@link Commit#complete}; the transaction verified, or for v5+
     * the group's partition added, by the local transaction coordinator, or by the id's coordinator's node when that
     * is another ({@code remote}).
     */
    static Commit start(final GroupCoordinator groups, final TxnCoordinator transactions, final RemoteTxnCheck remote,
        final Asked asked, final long nowMs)
    {
        final Commit commit = new Commit(groups, transactions, asked);
        if (asked.groupId() == null || asked.groupId().isEmpty())
        {
            commit.finish(Errors.INVALID_GROUP_ID);
            return commit;
        }
        commit.remote = remote.askElsewhere(transactions, asked.transactionalId(), asked.producerId(), asked.producerEpoch(),
            commit.offsetsPartition, asked.version() >= 5);
        if (commit.remote != null)
        {
            commit.complete(nowMs);
        }
        else if (asked.version() >= 5)
        {
            commit.adding = transactions.addPartitions(asked.transactionalId(), asked.producerId(), asked.producerEpoch(),
                Set.of(commit.offsetsPartition), (short)2);
            commit.complete(nowMs);
        }
        else
        {
            commit.verifyAndWrite(nowMs);
        }
        return commit;
    }

    /** A commit under way: verifying (v5+: the add's write), then its batch's write; final once {@link #complete}. */
    static final class Commit implements CoordinatorCall.Outcome
    {
        private final GroupCoordinator groups;
        private final TxnCoordinator transactions;
        private final Asked asked;
        private final TxnPartition offsetsPartition;
        /** Until when the batch's write is waited for: from when it is sent. */
        private long deadlineMs;
        /** v5+'s add of the group's partition (local), until answered. */
        private TxnCoordinator.Pending adding;
        /** The verification (or add) asked of the transactional id's coordinator on another node, until answered. */
        private TxnVerifier.Verification remote;
        private CoordinatorLog.Write write;
        private boolean done;
        private short error;
        /** Whether {@link #error} is every partition's (the group's or the transaction's), or only the valid partitions'. */
        private boolean everyPartition;

        Commit(final GroupCoordinator groups, final TxnCoordinator transactions, final Asked asked)
        {
            this.groups = groups;
            this.transactions = transactions;
            this.asked = asked;
            // the partition the batch is written to (the store's count, fixed once: PartitionCount), so the
            // transaction verified or added holds the very partition whose marker ends the offsets
            this.offsetsPartition = new TxnPartition(AddPartitionsRules.OFFSETS_TOPIC,
                groups.offsetsPartitionOf(asked.groupId() == null ? "" : asked.groupId()));
        }

        @Override
        public boolean complete(final long nowMs)
        {
            if (done)
            {
                return true;
            }
            if (remote != null)
            {
                if (!remote.done())
                {
                    return false;
                }
                final short verified = remote.error(0);
                remote = null;
                if (verified != Errors.NONE)
                {
                    everyPartition = true;
                    finish(verificationError(verified));
                    return true;
                }
                checkAndWrite(nowMs);
                return done;
            }
            if (adding != null)
            {
                if (!adding.complete(nowMs))
                {
                    return false;
                }
                final short added = adding.answer().error();
                adding = null;
                if (added != Errors.NONE)
                {
                    finish(verificationError(added));
                    return true;
                }
                verifyAndWrite(nowMs);
                return done;
            }
            if (write != null)
            {
                if (write.done())
                {
                    everyPartition = write.error() != Errors.NONE; // a failed write fails every partition the coordinator had
                    finish(write.error());
                }
                else if (nowMs >= deadlineMs)
                {
                    finish(Errors.COORDINATOR_NOT_AVAILABLE); // the write goes on, and its offsets are pending once answered
                }
            }
            return done;
        }

        /** The answer's error; {@link #everyPartition} says whether it is every partition's. */
        short error()
        {
            return error;
        }

        boolean everyPartition()
        {
            return everyPartition;
        }

        private void finish(final short e)
        {
            error = e;
            done = true;
        }

        /** In one step: the transaction verified to hold the group's partition, the group checked, the batch sent. */
        private void verifyAndWrite(final long nowMs)
        {
            everyPartition = true;
            final short verified = transactions.verify(asked.transactionalId(), asked.producerId(), asked.producerEpoch(),
                Set.of(offsetsPartition)).get(offsetsPartition);
            if (verified != Errors.NONE)
            {
                finish(verificationError(verified));
                return;
            }
            checkAndWrite(nowMs);
        }

        /**
         * The transaction verified: the group checked, the batch sent. This node is asked again whether it coordinates
         * the group (the call's gate ran before the verification, which may have waited for another node's answer or a
         * held add): if it no longer does, NOT_COORDINATOR (or COORDINATOR_LOAD_IN_PROGRESS) and nothing written, as Kafka
         * 4.4 runs the shard's write after the verification in {@code withActiveContextOrThrow}.
         */
        private void checkAndWrite(final long nowMs)
        {
            everyPartition = true;
            final short coordinating = groups.ownership().error(asked.groupId());
            if (coordinating != Errors.NONE)
            {
                finish(coordinating);
                return;
            }
            final short groupError = groups.validateTxnCommit(asked);
            if (groupError != Errors.NONE || asked.offsets().isEmpty())
            {
                everyPartition = groupError != Errors.NONE; // else only partitions with their own error (metadata too large)
                finish(groupError);
                return;
            }
            write = groups.writeTxnOffsets(asked);
            deadlineMs = nowMs + 2 * AwaitingWrites.TIMEOUT_MS;
            complete(nowMs);
        }

        /**
         * A verification's error as the commit answers it: Kafka's AddPartitionsToTxnManager turns
         * PRODUCER_FENCED into INVALID_PRODUCER_EPOCH and, for v0-3, TRANSACTION_ABORTABLE into
         * INVALID_TXN_STATE; then the coordinator's operation helper translates the rest ({@link CoordinatorLog#ofOperationError}).
         */
        private short verificationError(final short e)
        {
            return TxnOffsetCommits.verificationError(e, asked.version());
        }
    }

    /**
     * See {@link Commit}: a verification's error as a TxnOffsetCommit of {@code version} answers it, first as Kafka's
     * AddPartitionsToTxnManager turns it, then as the coordinator's operation helper does ({@link CoordinatorLog#ofOperationError}:
     * a remote coordinator's NETWORK_EXCEPTION is COORDINATOR_LOAD_IN_PROGRESS, a timeout COORDINATOR_NOT_AVAILABLE).
     */
    static short verificationError(final short e, final short version)
    {
        if (e == Errors.PRODUCER_FENCED)
        {
            return Errors.INVALID_PRODUCER_EPOCH;
        }
        if (e == Errors.TRANSACTION_ABORTABLE && version <= 3)
        {
            return Errors.INVALID_TXN_STATE;
        }
        return CoordinatorLog.ofOperationError(e);
    }

    /**
     * Kafka 4.4's checks of a transactional commit's group ({@code validateTransactionalOffsetCommit},
     * ClassicGroup's with isTransactional): no group and a generation → GROUP_ID_NOT_FOUND (v6+) or
     * ILLEGAL_GENERATION; a commit with no member, generation or instance passes whatever the group's
     * state; no REBALANCE_IN_PROGRESS.
     */
    static short validate(final Map<String, Group> groups, final Asked a)
    {
        final Group group = groups.get(a.groupId());
        if (group == null)
        {
            return a.generationId() < 0 ? Errors.NONE : a.version() >= 6 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
        }
        if (group.is(Group.State.DEAD))
        {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (a.generationId() < 0 && (group.is(Group.State.EMPTY) || (a.memberId().isEmpty() && a.groupInstanceId() == null)))
        {
            return Errors.NONE;
        }
        final short fenced = group.checkStatic(a.memberId(), a.groupInstanceId());
        if (fenced != Errors.NONE)
        {
            return fenced;
        }
        if (!group.members.containsKey(a.memberId()))
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        return a.generationId() != group.generationId ? Errors.ILLEGAL_GENERATION : Errors.NONE;
    }

    /**
     * The offsets as the producer's transactional batch; pending in {@code pending} once its write is
     * answered OK, and counted there as on their way ({@link TxnOffsets#sent}) until it is answered.
     */
    static CoordinatorLog.Write write(final Map<String, Group> groups, final CoordinatorTopic store, final TxnOffsets pending,
        final Asked a)
    {
        final long committedAtMs = store.clock().wallMs();
        final List<Group.TopicPartition> partitions = new ArrayList<>(a.offsets().keySet());
        final List<byte[]> keys = new ArrayList<>(partitions.size());
        final List<byte[]> values = new ArrayList<>(partitions.size());
        final Map<Group.TopicPartition, Group.Offset> offsets = new LinkedHashMap<>();
        for (final Group.TopicPartition tp : partitions)
        {
            final OffsetCommits.Asked o = a.offsets().get(tp);
            final Group.Offset offset = new Group.Offset(o.offset(), o.leaderEpoch(), o.metadata(), committedAtMs);
            offsets.put(tp, offset);
            keys.add(GroupRecords.offsetKey(a.groupId(), tp.topic(), tp.partition()));
            values.add(GroupRecords.offsetValue(offset));
        }
        offsets.keySet().forEach(tp -> pending.sent(a.groupId(), tp)); // a RequireStable fetch sees them from now on
        return store.write(a.groupId(), keys, values, a.producerId(), a.producerEpoch(), (error, baseOffset) ->
        {
            offsets.keySet().forEach(tp -> pending.answered(a.groupId(), tp));
            if (error != Errors.NONE)
            {
                return;
            }
            if (!groups.containsKey(a.groupId()))
            {
                final Group group = new Group(a.groupId()); // Kafka makes the group as it takes the offsets in
                group.stateTimestamp = store.clock().wallMs();
                groups.put(a.groupId(), group);
            }
            final int partition = store.partitionOf(a.groupId()); // the one written to: the marker ending them comes there
            long recordOffset = baseOffset;
            for (final Map.Entry<Group.TopicPartition, Group.Offset> e : offsets.entrySet())
            {
                pending.add(a.producerId(), a.groupId(), e.getKey(), e.getValue().at(recordOffset++), partition);
            }
        });
    }
}
