package io.ferrite.log;

import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** A log directory for one {@code orders-0} log of small segments, opened with a test clock (leader epochs, truncation). */
abstract class OrdersLogFixture
{
    /** Small segments: several per log (ten 3-record batches are about two of them). */
    static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048");

    @TempDir
    Path dir;

    final MutableClock clock = new MutableClock(1_700_000_000_000L);
    final Batches batches = new Batches();
    final AppendResult result = new AppendResult();

    LogManager open() throws IOException
    {
        return LogManager.open(LogManagerConfig.of(dir).withClock(clock));
    }

    Path partitionDir()
    {
        return dir.resolve("orders-0");
    }

    /** As after a crash: no clean-shutdown marker and no recovery points (every segment recovered at the next open). */
    void uncleanStop() throws IOException
    {
        Files.deleteIfExists(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        Files.deleteIfExists(dir.resolve(OffsetCheckpoint.RECOVERY_POINTS));
    }
}
