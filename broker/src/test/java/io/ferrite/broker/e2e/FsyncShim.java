package io.ferrite.broker.e2e;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The LD_PRELOAD shims in the test resources built with gcc for a child server: {@code failing_fsync.c}
 * fails the fsyncs of chosen files ({@link FsyncFailureTest}) and records the paths of the ones made
 * ({@link CreationDurabilityTest}); {@code crash_point.c} SIGKILLs the server at a chosen fsync or write
 * ({@link TransactionCrashPointTest}).
 */
final class FsyncShim
{
    private FsyncShim()
    {
    }

    /** Builds {@code failing_fsync.c} in {@code dir}; without gcc the calling test is skipped, not passed. */
    static Path compile(final Path dir) throws IOException, InterruptedException
    {
        return compile(dir, "failing_fsync");
    }

    /** Builds the shim {@code name}{@code .c} in {@code dir}; without gcc the calling test is skipped, not passed. */
    static Path compile(final Path dir, final String name) throws IOException, InterruptedException
    {
        final Path source = dir.resolve(name + ".c");
        try (InputStream in = FsyncShim.class.getResourceAsStream(name + ".c"))
        {
            Files.copy(in, source);
        }
        final Path shim = dir.resolve(name + ".so");
        final Process gcc;
        try
        {
            gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O2", "-o", shim.toString(), source.toString(), "-ldl")
                .redirectErrorStream(true).start();
        }
        catch (final IOException ex)
        {
            Assumptions.abort("gcc is not on this machine: " + ex.getMessage());
            throw ex;
        }
        final String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), "gcc: " + out);
        return shim;
    }
}
