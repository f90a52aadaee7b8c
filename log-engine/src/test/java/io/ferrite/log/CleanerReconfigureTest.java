package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LogCleaner#reconfigure} (dynamic {@code log.cleaner.*} configs) with settings no cleaner thread can start
 * with: the threads run again with the settings in force before, which the call returns for a caller to put back.
 */
class CleanerReconfigureTest
{
    @TempDir
    Path dir;

    private static CleanerConfig settings(final int threads, final double loadFactor)
    {
        final CleanerConfig d = CleanerConfig.defaults();
        return d.with(true, threads, 2L * 1024 * 1024, loadFactor, d.ioBufferSize(), d.maxIoBytesPerSecond(), 10);
    }

    /** The cleaner's threads once there are {@code n} and each has started. */
    private static List<Thread> running(final LogCleaner cleaner, final int n)
    {
        await(() -> cleaner.threads().size() == n && cleaner.threads().stream().allMatch(t -> t != null && t.isAlive()),
            Duration.ofSeconds(30), n + " cleaner threads running");
        return cleaner.threads();
    }

    @Test
    void aCleanerThatCannotStartWithNewSettingsRunsOnWithItsOld() throws Exception
    {
        final CleanerConfig good = settings(1, 0.9);
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withCleaner(good)))
        {
            final LogCleaner cleaner = logs.cleaner();
            final Thread old = running(cleaner, 1).get(0);

            final IllegalStateException bad = assertThrows(IllegalStateException.class, () -> cleaner.reconfigure(settings(2, 1.5)));
            assertTrue(bad.getMessage().contains("log.cleaner.io.buffer.load.factor=1.5"), bad.getMessage());
            final List<Thread> now = running(cleaner, 1); // the old settings' one thread runs again
            assertNotSame(old, now.get(0));
            assertTrue(cleaner.runs());

            // the settings in force are the old ones: a later change starts from them, and returns them
            final CleanerConfig before = cleaner.reconfigure(settings(2, 0.9));
            assertEquals(good, before);
            running(cleaner, 2);
            assertEquals(settings(2, 0.9), cleaner.reconfigure(good));
            running(cleaner, 1);
        }
    }
}
