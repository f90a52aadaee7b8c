package io.ferrite.log;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Random leader logs — plain, compressed (every codec), idempotent and transactional batches, COMMIT and
 * ABORT markers, leader epochs that move, CreateTime or LogAppendTime, segments and indexes small enough to
 * roll often by size and by full indexes — copied into a follower through {@link PartitionLog#appendAsFollower}
 * in fetches of random numbers of batches, often cut inside the next one, interleaved with the leader's
 * appends: after every round the follower's producer state and its LSO for the same high watermark are the
 * leader's; at the end its files are the leader's byte for byte, and again after an unclean reopen of both.
 */
@Tag("shortened")
class FollowerCopyPropertyTest
{
    @TempDir
    Path root;

    @Test
    void aFollowerFedAtRandomFetchBoundariesHasTheLeadersLog()
    {
        // 4 tries in the default build; -Pslow runs this class (tagged shortened) with ferrite.followercopy.tries=10,
        // -Plong with 10 times ferrite.tries.factor: 100
        ReplicaCopy.property("follower copy", Integer.getInteger("ferrite.followercopy.tries", 4), root,
            FollowerCopyPropertyTest::check);
    }

    private static void check(final Path data, final Random r) throws IOException
    {
        final Map<String, String> config = ReplicaCopy.smallSegments(r);
        if (r.nextInt(3) == 0)
        {
            config.put(LogConfig.MESSAGE_TIMESTAMP_TYPE, "LogAppendTime");
        }
        final ReplicaCopy copy = new ReplicaCopy();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog leader = manager.createLog("leader", 0, config);
            final PartitionLog follower = manager.createLog("follower", 0, config);
            final int rounds = 2 + r.nextInt(6);
            for (int round = 0; round < rounds; round++)
            {
                copy.writeLeader(leader, r, 10 + r.nextInt(80));
                copy.copy(leader, follower, r, 1 + r.nextInt(12), r.nextBoolean());
                final long hw = r.nextInt((int)follower.logEndOffset() + 1);
                leader.highWatermark(hw);
                follower.highWatermark(hw);
                assertEquals(ReplicaCopy.producers(leader), ReplicaCopy.producers(follower), "producers after round " + round);
                assertEquals(leader.transactions().lastStableOffset(), follower.transactions().lastStableOffset(), "LSO at high watermark " + hw);
            }
        }
        ReplicaCopy.assertSameFiles(data.resolve("leader-0"), data.resolve("follower-0"));
        Files.delete(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        Files.delete(data.resolve(OffsetCheckpoint.RECOVERY_POINTS));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            assertEquals(ReplicaCopy.producers(manager.log("leader", 0)), ReplicaCopy.producers(manager.log("follower", 0)));
            assertEquals(manager.log("leader", 0).logEndOffset(), manager.log("follower", 0).logEndOffset());
        }
        ReplicaCopy.assertSameFiles(data.resolve("leader-0"), data.resolve("follower-0"));
    }
}
