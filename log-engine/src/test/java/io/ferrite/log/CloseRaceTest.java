package io.ferrite.log;

import io.ferrite.testing.MachineLock;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * close() from another thread while the writer appends in a tight loop, over many rounds
 * ({@code -Dferrite.closerace.rounds}: 20 in the default build, 60 in {@code -Pslow}, 600 in {@code -Plong}; tagged
 * {@code shortened}, so that {@code -Pslow} runs its full form), in a child JVM ({@link CloseRaceChild}):
 * a close that unmaps under an append crashes that JVM, which must show as this test failing.
 * Passes only if every append answered OK until one answered LOG_CLOSED, nothing threw, and every
 * acknowledged batch (and nothing else) is in the log reopened after each round.
 */
@Tag("shortened")
class CloseRaceTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.closerace.rounds", 20);

    @TempDir
    Path dir;

    private Path shmDir;

    /** Held from before the test's /dev/shm folder is made until it is deleted: {@code OffsetMapTest} measures the system's
     * shared memory, in the other test JVM of this module (two run at once). */
    private MachineLock shmLock;

    @org.junit.jupiter.api.BeforeEach
    void lockShm()
    {
        shmLock = MachineLock.hold(MachineLock.DEV_SHM);
    }

    @org.junit.jupiter.api.AfterEach
    void deleteShmDir() throws java.io.IOException
    {
        try
        {
            ChildJvm.deleteRecursively(shmDir);
        }
        finally
        {
            shmLock.close();
        }
    }

    @Test
    void aCloseFromAnotherThreadNeverPullsTheMappingFromUnderAnAppend() throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("close race seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        shmDir = ChildJvm.shmDir("ferrite-close-race-");
        final Path data = shmDir != null ? shmDir : dir.resolve("data");
        final ChildJvm.Result result = ChildJvm.run(CloseRaceChild.class, dir, List.of(), data.toString(),
            Integer.toString(ROUNDS), Long.toString(seed));
        final String report = result.report(seed);
        assertEquals(0, result.exitCode(), report);
        assertTrue(result.output().contains("DONE"), report);
    }
}
