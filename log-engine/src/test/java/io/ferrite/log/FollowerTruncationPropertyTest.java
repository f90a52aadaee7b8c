package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code FollowerCopyPropertyTest}'s random leader logs copied into a follower, which is truncated at random batch
 * boundaries (where OffsetForLeaderEpoch answers land) between rounds and then fed again from the leader: after every
 * round its batches are the leader's byte for byte, and its producer state and LSO for the same high watermark are the
 * leader's (for a high watermark that, as a leader's, never goes back); again after a clean and an unclean reopen.
 */
@Tag("shortened")
class FollowerTruncationPropertyTest
{
    @TempDir
    Path root;

    @Test
    void aFollowerTruncatedAtRandomPointsAndFedAgainHasTheLeadersLog()
    {
        // 3 tries in the default build; -Pslow runs this class (tagged shortened) with ferrite.followertruncation.tries=8,
        // -Plong with 8 times ferrite.tries.factor: 80
        ReplicaCopy.property("follower truncation", Integer.getInteger("ferrite.followertruncation.tries", 3), root,
            FollowerTruncationPropertyTest::check);
    }

    private static void check(final Path data, final Random r) throws IOException
    {
        final Map<String, String> config = ReplicaCopy.smallSegments(r);
        final ReplicaCopy copy = new ReplicaCopy();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog leader = manager.createLog("leader", 0, config);
            final PartitionLog follower = manager.createLog("follower", 0, config);
            final int rounds = 2 + r.nextInt(5);
            for (int round = 0; round < rounds; round++)
            {
                copy.writeLeader(leader, r, 10 + r.nextInt(80));
                copy.copy(leader, follower, r, 1 + r.nextInt(12), r.nextBoolean());
                final long target = batchBoundary(leader, r.nextInt((int)follower.logEndOffset() + 1));
                follower.truncateTo(target);
                assertEquals(target, follower.logEndOffset(), "round " + round);
                copy.copy(leader, follower, r, 1 + r.nextInt(12), r.nextBoolean());
                same(leader, follower, r, "round " + round);
            }
        }
        for (int unclean = 0; unclean < 2; unclean++)
        {
            if (unclean == 1)
            {
                Files.delete(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
                Files.delete(data.resolve(OffsetCheckpoint.RECOVERY_POINTS));
            }
            try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
            {
                same(manager.log("leader", 0), manager.log("follower", 0), r, "reopened, unclean " + unclean);
            }
        }
    }

    /** The base offset of the leader's batch holding {@code offset} (its log end for the log end). */
    private static long batchBoundary(final PartitionLog leader, final long offset)
    {
        final RecordBatch batch = new RecordBatch();
        if (offset >= leader.logEndOffset() || leader.readBatch(offset, leader.logEndOffset(), batch) != PartitionLog.READ_OK)
        {
            return offset;
        }
        return Math.min(offset, batch.baseOffset());
    }

    private static void same(final PartitionLog leader, final PartitionLog follower, final Random r, final String what)
    {
        assertEquals(leader.logEndOffset(), follower.logEndOffset(), what);
        assertArrayEquals(ReplicaCopy.content(leader), ReplicaCopy.content(follower), what + ": the follower's batches are the leader's");
        // the high watermark only moves forward (the leader's; the follower's truncation lowered its own): an ended
        // transaction's stability is decided by the high watermarks the log saw when its marker came
        final long from = Math.min(leader.highWatermark(), follower.logEndOffset());
        final long hw = from + r.nextInt((int)(follower.logEndOffset() - from) + 1);
        leader.highWatermark(hw);
        follower.highWatermark(hw);
        assertEquals(ReplicaCopy.producers(leader), ReplicaCopy.producers(follower), what + ": producers");
        assertEquals(leader.transactions().lastStableOffset(), follower.transactions().lastStableOffset(), what + ": LSO at high watermark " + hw);
    }
}
