package io.ferrite.log;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A failed fsync at the end of a segment replacement — of a new segment's file ({@code .cleaned}, before the
 * commit) or of the partition directory (after it) — is the log's failed fsync, as a flush's
 * ({@link FsyncFailure}): recorded, thrown, and no replacement after it. The fsync fails for real, in a child
 * JVM with the LD_PRELOAD shim {@code recording_fsync.c} (EIO for paths ending with the suffix given).
 */
class SwapFsyncFailureTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {".cleaned", "/t-0"})
    void aFailedFsyncOfTheSwapIsTheLogsFsyncFailure(final String failing) throws Exception
    {
        final Path shim = TxnIndexFsyncOrderTest.compileShim(dir);
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path trigger = dir.resolve("armed");
        final ChildJvm.Result child = ChildJvm.run(SwapFsyncFailureChild.class, dir, List.of(),
            Map.of("LD_PRELOAD", shim.toString(), "FERRITE_FAIL_FSYNC_TRIGGER", trigger.toString(),
                "FERRITE_FAIL_FSYNC_SUFFIX", failing), data.toString(), trigger.toString());
        final List<String> results = child.output().stream().filter(l -> l.startsWith("RESULT ")).toList();
        assertEquals(List.of("RESULT thrown IOException",
                "RESULT fsyncFailure true", "RESULT again " + SegmentReplacer.FAILED), results,
            () -> "child exit " + child.exitCode() + ":\n" + String.join("\n", child.output()));
        assertEquals(0, child.exitCode());
    }
}
