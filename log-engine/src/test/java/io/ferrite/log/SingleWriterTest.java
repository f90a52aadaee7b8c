package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The single writer is recorded by the writing itself, not by an assertion: what depends on it
 * (close() telling its own writer from another thread) holds with assertions off, as production
 * runs, exactly as with them on. Run with {@code -Dferrite.test.assertions=false} to see it.
 */
class SingleWriterTest
{
    @TempDir
    Path dir;

    private final AppendResult result = new AppendResult();
    private final BatchClaim claim = new BatchClaim();

    @Test
    void theWriterWhoseFirstActIsAClaimClosesItsLogAndAbortsTheClaim() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("w", 0, Map.of());
            assertTrue(log.claim(500, claim, result), result.toString()); // no claimWriter(): the claim makes it the writer
            log.close(); // its own claim: aborted, not waited for
            assertTrue(log.isClosed());
            assertFalse(claim.isOpen());
        }
        assertLogEnd(0);
    }

    @Test
    void theWriterWhoseFirstActIsAnAppendClosesItsLogAndAbortsALaterClaim() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("w", 0, Map.of());
            final Batches batches = new Batches().records(3, 1, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertTrue(log.claim(500, claim, result), result.toString());
            log.close();
            assertTrue(log.isClosed());
            assertFalse(claim.isOpen());
        }
        assertLogEnd(3);
    }

    @Test
    void withAssertionsOnASecondWriterIsCaught() throws Exception
    {
        assumeTrue(PartitionLog.class.desiredAssertionStatus(), "the check is an assertion: needs -ea");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("w", 0, Map.of());
            final Batches batches = new Batches().records(1, 1, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
            final AtomicReference<Throwable> thrown = new AtomicReference<>();
            final Thread second = new Thread(() ->
            {
                try
                {
                    log.append(batches.buffer, 0, batches.length, new AppendResult());
                }
                catch (final Throwable t)
                {
                    thrown.set(t);
                }
            });
            second.start();
            second.join(30_000);
            assertFalse(second.isAlive());
            assertInstanceOf(AssertionError.class, thrown.get());
            assertEquals(1, log.logEndOffset(), "the second writer's append did not happen");
        }
    }

    private void assertLogEnd(final long expected) throws IOException
    {
        try (LogManager reopened = LogManager.open(LogManagerConfig.of(dir)))
        {
            assertEquals(expected, reopened.log("w", 0).logEndOffset());
        }
    }
}
