package io.ferrite.log;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real full disk: a 1 MiB tmpfs (mounting it needs root, which CI has; elsewhere the test is
 * skipped, saying why). Appends fail with a typed storage error and leave the log consistent and
 * readable; once space returns, appends work again.
 */
class DiskFullTest
{
    @TempDir
    Path temp;

    private Path mount;

    @BeforeEach
    void mountTmpfs() throws Exception
    {
        mount = temp.resolve("small-disk");
        Files.createDirectories(mount);
        final Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString())
            .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Assumptions.assumeTrue(p.waitFor() == 0, "mounting a 1 MiB tmpfs needs root (CI runs as root): " + out);
    }

    @AfterEach
    void unmount() throws Exception
    {
        new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor();
    }

    @ParameterizedTest
    @EnumSource(WriteStrategy.class)
    void aFullDiskIsATypedErrorAndAppendsResumeWhenSpaceReturns(final WriteStrategy strategy) throws IOException
    {
        fillTheDisk(strategy, false);
    }

    /** The same with batches built in claims: the claim (or its commit) fails typed, and claims resume. */
    @ParameterizedTest
    @EnumSource(WriteStrategy.class)
    void aFullDiskFailsAClaimWithATypedErrorAndClaimsResumeWhenSpaceReturns(final WriteStrategy strategy) throws IOException
    {
        fillTheDisk(strategy, true);
    }

    private static void append(final PartitionLog log, final Batches batches, final boolean claims, final BatchClaim claim,
        final AppendResult result)
    {
        if (!claims)
        {
            log.append(batches.buffer, 0, batches.length, result);
        }
        else if (log.claim(batches.length, claim, result))
        {
            claim.buffer().putBytes(0, batches.buffer, 0, batches.length);
            claim.buffer().putLong(0, BatchClaim.UNCOMMITTED); // all ones: the same in either byte order
            log.commit(claim, batches.length, result);
        }
    }

    private void fillTheDisk(final WriteStrategy strategy, final boolean claims) throws IOException
    {
        final BatchClaim claim = new BatchClaim();
        final Path ballast = mount.resolve("ballast");
        Files.write(ballast, new byte[256 * 1024]);
        final LogManager manager = LogManager.open(LogManagerConfig.of(mount.resolve("logs")).withWriteStrategy(strategy));
        try
        {
            final PartitionLog log = manager.createLog("full", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "131072",
                LogConfig.SEGMENT_INDEX_BYTES, "8192", LogConfig.INDEX_INTERVAL_BYTES, "512"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            final List<byte[]> written = new ArrayList<>();
            int failures = 0;
            for (int i = 0; i < 2000 && failures == 0; i++)
            {
                final long end = log.logEndOffset();
                batches.records(8, i, System.currentTimeMillis());
                append(log, batches, claims, claim, result);
                if (result.status == AppendResult.OK)
                {
                    written.add(batches.bytes());
                }
                else
                {
                    assertEquals(AppendResult.STORAGE_ERROR, result.status, result.toString());
                    assertEquals(end, log.logEndOffset(), "a failed append changes nothing");
                    assertTrue(!claim.isOpen(), "a failed claim or commit leaves no claim open");
                    failures++;
                }
            }
            assertEquals(1, failures, "the disk filled up");
            assertTrue(written.size() > 10, "appended before the disk filled: " + written.size() + ", then " + result);
            assertReadable(log, written);

            Files.delete(ballast);
            final long end = log.logEndOffset();
            batches.records(8, 99_999, System.currentTimeMillis());
            append(log, batches, claims, claim, result);
            assertEquals(AppendResult.OK, result.status, "appends resume: " + result);
            assertEquals(end, result.firstOffset);
            written.add(batches.bytes());
            assertReadable(log, written);
        }
        finally
        {
            manager.close();
        }
        // and the log reopens whole
        try (LogManager reopened = LogManager.open(LogManagerConfig.of(mount.resolve("logs")).withWriteStrategy(strategy)))
        {
            assertTrue(reopened.log("full", 0).logEndOffset() > 80);
        }
    }

    private static void assertReadable(final PartitionLog log, final List<byte[]> written) throws IOException
    {
        final FileRegion region = new FileRegion();
        long offset = 0;
        for (final byte[] batch : written)
        {
            assertEquals(PartitionLog.READ_OK, log.read(offset, 1, log.logEndOffset(), true, region));
            final byte[] expected = batch.clone();
            java.nio.ByteBuffer.wrap(expected).putLong(0, offset).putInt(12, 0);
            assertArrayEquals(expected, PartitionLogTest.readRegion(region));
            offset += 8;
        }
    }
}
