package io.ferrite.log;

import io.ferrite.testing.MachineLock;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * close() from another thread while readers of every kind — fetch regions, a tailer, readBatch,
 * ListOffsets' index lookups — read the log in tight loops, over many rounds
 * ({@code -Dferrite.closereadrace.rounds}: 10 in the default build, 30 in {@code -Pslow}, 300 in {@code -Plong}; tagged
 * {@code shortened}, so that {@code -Pslow} runs its full form), in a
 * child JVM ({@link CloseReadRaceChild}): a read of an unmapped page crashes that JVM, which shows as
 * this test failing. Passes only if every reader ended with {@link LogClosedException} and nothing
 * else was thrown. Run twice: with Agrona's bounds checks (a stale read then may throw
 * IndexOutOfBoundsException instead of crashing) and without them, as a benchmark build runs.
 */
@Tag("shortened")
class CloseReadRaceTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.closereadrace.rounds", 10);

    @TempDir
    Path dir;

    private Path shmDir;

    /** Held from before the test's /dev/shm folder is made until it is deleted: {@code OffsetMapTest} measures the system's
     * shared memory, in the other test JVM of this module (two run at once). */
    private MachineLock shmLock;

    @BeforeEach
    void lockShm()
    {
        shmLock = MachineLock.hold(MachineLock.DEV_SHM);
    }

    @AfterEach
    void deleteShmDir() throws IOException
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
    void readersRacingACloseSeeLogClosedExceptionAndNeverAnUnmappedPage() throws Exception
    {
        race(List.of());
    }

    @Test
    void soWithoutAgronasBoundsChecks() throws Exception
    {
        race(List.of("-Dagrona.disable.bounds.checks=true"));
    }

    private void race(final List<String> jvmOptions) throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("close read race seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        shmDir = ChildJvm.shmDir("ferrite-close-read-race-");
        final Path data = shmDir != null ? shmDir : dir.resolve("data");
        final ChildJvm.Result result = ChildJvm.run(CloseReadRaceChild.class, dir, jvmOptions, data.toString(),
            Integer.toString(ROUNDS), Long.toString(seed));
        final String report = result.report(seed);
        assertEquals(0, result.exitCode(), report);
        assertTrue(result.output().contains("DONE"), report);
    }
}
