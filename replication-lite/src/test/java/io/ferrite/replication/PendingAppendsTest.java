package io.ferrite.replication;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PendingAppendsTest
{
    private final PendingAppends pending = new PendingAppends();

    @Test
    void anAppendIsAcknowledgedOnlyByACommitOfItsOwnEpoch() throws Exception
    {
        final CompletableFuture<Long> truncated = pending.add(10, 5);
        final CompletableFuture<Long> later = pending.add(12, 5);
        // the new leader of epoch 6 committed its own records at offsets 9..10: ours there were truncated
        pending.committed(9, 10, 6);
        final ExecutionException replaced = assertThrows(ExecutionException.class, truncated::get);
        assertInstanceOf(NotLeaderOrFollowerException.class, replaced.getCause());
        assertFalse(later.isDone(), "offset 12 is not committed yet");

        final CompletableFuture<Long> own = pending.add(14, 6);
        pending.committed(11, 14, 6);
        assertThrows(ExecutionException.class, later::get, "offset 12 was committed from epoch 6, appended in 5");
        assertEquals(14L, own.get());
    }

    @Test
    void aRecordOfAnEarlierEpochCommittedByALaterLeaderIsAcknowledged() throws Exception
    {
        final CompletableFuture<Long> appended = pending.add(3, 5);
        // re-elected in epoch 7, the leader commits its epoch-5 tail: the batch keeps epoch 5
        pending.committed(2, 4, 5);
        assertEquals(3L, appended.get());
    }
}
