package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rules of offsets inside transactions, as Kafka 4.4's OffsetMetadataManager and ClassicGroup
 * have them: pending offsets end with their producer's marker in their group's partition (COMMIT
 * makes them committed unless a later record committed the partition, ABORT drops them), a tombstone
 * drops them; a transactional commit's group checks; a verification's error per TxnOffsetCommit version.
 */
class TxnOffsetRulesTest
{
    private static final Group.TopicPartition TP = new Group.TopicPartition("orders", 0);
    private static final long T = 1_700_000_000_000L;

    private final Map<String, Group> groups = new HashMap<>();
    private final TxnOffsets pending = new TxnOffsets();

    private static Group.Offset at(final long offset, final long recordOffset)
    {
        return new Group.Offset(offset, -1, "", T, recordOffset);
    }

    @Test
    void aCommitMaterialisesThePendingOffsetsAndAnAbortDropsThem()
    {
        pending.add(7, "g", TP, at(5, 10), 0);
        assertTrue(pending.isPending("g", TP));
        assertNull(groups.get("g"), "pending: not a committed offset");
        assertEquals(1, pending.complete(7, true, 0, g -> true, groups, T));
        assertEquals(5, groups.get("g").offsets.get(TP).offset(), "the group is made as the offset is committed");
        assertFalse(pending.isPending("g"));

        pending.add(7, "g", TP, at(9, 20), 0);
        assertEquals(1, pending.complete(7, false, 0, g -> true, groups, T));
        assertEquals(5, groups.get("g").offsets.get(TP).offset(), "the abort left the committed offset");
        assertFalse(pending.isPending("g", TP));
        assertEquals(0, pending.complete(7, true, 0, g -> true, groups, T), "a marker with nothing pending changes nothing");
    }

    @Test
    void aLaterPlainCommitWinsOverTheTransactionsOffset()
    {
        pending.add(7, "g", TP, at(5, 10), 0);
        final Group g = new Group("g");
        g.offsets.put(TP, at(6, 11)); // a plain commit written after the transactional record
        groups.put("g", g);
        pending.complete(7, true, 0, id -> true, groups, T);
        assertEquals(6, g.offsets.get(TP).offset());

        pending.add(8, "g", TP, at(8, 12), 0);
        pending.complete(8, true, 0, id -> true, groups, T);
        assertEquals(8, g.offsets.get(TP).offset(), "a later transactional record wins");
    }

    @Test
    void aMarkerEndsOnlyItsProducersOffsetsOfItsPartitionsGroups()
    {
        pending.add(7, "here", TP, at(5, 10), 0);
        pending.add(7, "elsewhere", TP, at(6, 3), 1);
        pending.add(8, "here", TP, at(9, 11), 0);
        assertEquals(1, pending.complete(7, true, 0, id -> true, groups, T));
        assertEquals(5, groups.get("here").offsets.get(TP).offset());
        assertTrue(pending.isPending("here", TP), "producer 8's offset is still pending there");
        assertTrue(pending.isPending("elsewhere", TP), "another partition's marker ends it");
        assertNull(groups.get("elsewhere"));
        pending.drop("here", TP); // a tombstone of the key
        assertFalse(pending.isPending("here"));
        assertEquals(0, pending.complete(8, true, 0, id -> true, groups, T), "dropped by the tombstone");
        assertEquals(1, pending.complete(7, false, 1, id -> true, groups, T));
        assertFalse(pending.isPending("elsewhere"));
    }

    @Test
    void aBatchOnItsWayIsUnstableUntilEachSendIsAnswered()
    {
        final Group.TopicPartition other = new Group.TopicPartition("orders", 1);
        pending.sent("g", TP);
        pending.sent("g", TP);
        assertTrue(pending.isUnstable("g", TP));
        assertTrue(pending.isUnstable("g"));
        assertFalse(pending.isUnstable("g", other));
        assertFalse(pending.isPending("g", TP), "on its way is not pending (expiry, deletion and markers go by what was written)");
        pending.answered("g", TP); // say the first write failed: nothing added
        assertTrue(pending.isUnstable("g", TP), "the second batch is still on its way");
        pending.answered("g", TP);
        pending.add(7, "g", TP, at(5, 10), 0); // the second one written OK
        assertTrue(pending.isUnstable("g", TP), "pending now");
        pending.complete(7, false, 0, id -> true, groups, T);
        assertFalse(pending.isUnstable("g", TP));
        assertFalse(pending.isUnstable("g"));
        pending.answered("g", TP); // an answer with no count left changes nothing
        assertFalse(pending.isUnstable("g"));
    }

    private static TxnOffsetCommits.Asked asked(final int version, final int generation, final String member, final String instance)
    {
        return new TxnOffsetCommits.Asked("t", "g", 7, (short)0, generation, member, instance, (short)version, Map.of());
    }

    @Test
    void theGroupChecksOfATransactionalCommit()
    {
        assertEquals(Errors.NONE, TxnOffsetCommits.validate(groups, asked(5, -1, "", null)), "no group, no generation");
        assertEquals(Errors.ILLEGAL_GENERATION, TxnOffsetCommits.validate(groups, asked(5, 3, "m", null)));
        assertEquals(Errors.GROUP_ID_NOT_FOUND, TxnOffsetCommits.validate(groups, asked(6, 3, "m", null)));

        final Group g = new Group("g");
        g.generationId = 3;
        g.members.put("m", null);
        g.staticMembers.put("i", "m");
        g.state = Group.State.COMPLETING_REBALANCE;
        groups.put("g", g);
        assertEquals(Errors.NONE, TxnOffsetCommits.validate(groups, asked(3, 3, "m", null)), "no REBALANCE_IN_PROGRESS in a transaction");
        assertEquals(Errors.NONE, TxnOffsetCommits.validate(groups, asked(3, -1, "", null)), "without member: any state");
        assertEquals(Errors.UNKNOWN_MEMBER_ID, TxnOffsetCommits.validate(groups, asked(3, -1, "x", null)));
        assertEquals(Errors.ILLEGAL_GENERATION, TxnOffsetCommits.validate(groups, asked(3, 2, "m", null)));
        assertEquals(Errors.FENCED_INSTANCE_ID, TxnOffsetCommits.validate(groups, asked(3, 3, "x", "i")));
        assertEquals(Errors.UNKNOWN_MEMBER_ID, TxnOffsetCommits.validate(groups, asked(3, 3, "m", "unknown")));
        assertEquals(Errors.NONE, TxnOffsetCommits.validate(groups, asked(3, 3, "m", "i")));
        g.state = Group.State.DEAD;
        assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, TxnOffsetCommits.validate(groups, asked(3, 3, "m", null)));
    }

    @Test
    void verificationErrorsByVersion()
    {
        for (short v = 0; v <= 6; v++)
        {
            assertEquals(Errors.INVALID_PRODUCER_EPOCH, TxnOffsetCommits.verificationError(Errors.PRODUCER_FENCED, v));
            assertEquals(v <= 3 ? Errors.INVALID_TXN_STATE : Errors.TRANSACTION_ABORTABLE,
                TxnOffsetCommits.verificationError(Errors.TRANSACTION_ABORTABLE, v), "v" + v);
            assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnOffsetCommits.verificationError(Errors.INVALID_PRODUCER_ID_MAPPING, v));
            assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnOffsetCommits.verificationError(Errors.CONCURRENT_TRANSACTIONS, v));
            // then as Kafka 4.4's CoordinatorOperationExceptionHelper (a remote coordinator's answer, review 1 of clustertxn, M3)
            assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnOffsetCommits.verificationError(Errors.NETWORK_EXCEPTION, v));
            assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, TxnOffsetCommits.verificationError(Errors.REQUEST_TIMED_OUT, v));
            assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, TxnOffsetCommits.verificationError(Errors.NOT_ENOUGH_REPLICAS, v));
            assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, TxnOffsetCommits.verificationError(Errors.UNKNOWN_TOPIC_OR_PARTITION, v));
            assertEquals(Errors.NOT_COORDINATOR, TxnOffsetCommits.verificationError(Errors.NOT_LEADER_OR_FOLLOWER, v));
            assertEquals(Errors.NOT_COORDINATOR, TxnOffsetCommits.verificationError(Errors.KAFKA_STORAGE_ERROR, v));
            assertEquals(Errors.UNKNOWN_SERVER_ERROR, TxnOffsetCommits.verificationError(Errors.MESSAGE_TOO_LARGE, v));
            assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, TxnOffsetCommits.verificationError(Errors.COORDINATOR_NOT_AVAILABLE, v));
            assertEquals(Errors.NOT_COORDINATOR, TxnOffsetCommits.verificationError(Errors.NOT_COORDINATOR, v));
        }
    }
}
