package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * close() from another thread while the writer appends in a tight loop, over many rounds
 * ({@code -Dferrite.closerace.rounds}, 60 by default), in a child JVM ({@link CloseRaceChild}):
 * a close that unmaps under an append crashes that JVM, which must show as this test failing.
 * Passes only if every append answered OK until one answered LOG_CLOSED, nothing threw, and every
 * acknowledged batch (and nothing else) is in the log reopened after each round.
 */
class CloseRaceTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.closerace.rounds", 60);

    @TempDir
    Path dir;

    /**
     * On tmpfs when there is one: there fsync costs nothing, so a close reaches its unmapping within
     * microseconds of refusing new appends, while an append already past that check is still at work.
     */
    private Path dataDir() throws java.io.IOException
    {
        final Path shm = Path.of("/dev/shm");
        if (java.nio.file.Files.isDirectory(shm) && java.nio.file.Files.isWritable(shm))
        {
            shmDir = java.nio.file.Files.createTempDirectory(shm, "ferrite-close-race-");
            return shmDir;
        }
        return dir.resolve("data");
    }

    private Path shmDir;

    @org.junit.jupiter.api.AfterEach
    void deleteShmDir() throws java.io.IOException
    {
        if (shmDir != null)
        {
            try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(shmDir))
            {
                for (final Path p : (Iterable<Path>)files.sorted(java.util.Comparator.reverseOrder())::iterator)
                {
                    java.nio.file.Files.deleteIfExists(p);
                }
            }
        }
    }

    @Test
    void aCloseFromAnotherThreadNeverPullsTheMappingFromUnderAnAppend() throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("close race seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // the child runs with this JVM's assertion setting: the -da run must cover production's case
        command.add(CloseRaceTest.class.desiredAssertionStatus() ? "-ea" : "-da");
        command.add("--add-opens");
        command.add("java.base/jdk.internal.misc=ALL-UNNAMED");
        command.add("-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log")); // a crash report stays out of the module
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(CloseRaceChild.class.getName());
        command.add(dataDir().toString());
        command.add(Integer.toString(ROUNDS));
        command.add(Long.toString(seed));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        final Thread watchdog = new Thread(() ->
        {
            try
            {
                if (!child.waitFor(5, TimeUnit.MINUTES))
                {
                    child.destroyForcibly(); // a hung close or writer: the output then ends without DONE
                }
            }
            catch (final InterruptedException ignored)
            {
                child.destroyForcibly();
            }
        });
        watchdog.setDaemon(true);
        watchdog.start();
        final List<String> output = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null)
            {
                if (!line.startsWith("ROUND ") && !line.contains("SLF4J") && !line.contains(" INFO "))
                {
                    output.add(line);
                }
            }
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child ended its output but not its process");
        }
        finally
        {
            child.destroyForcibly();
        }
        final String report = "seed " + seed + ", child exit " + child.exitValue() + ":\n" + String.join("\n", output);
        assertEquals(0, child.exitValue(), report);
        assertTrue(output.contains("DONE"), report);
    }
}
