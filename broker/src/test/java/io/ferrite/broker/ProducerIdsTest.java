package io.ferrite.broker;

import io.ferrite.broker.txn.ProducerIdSource;
import io.ferrite.broker.txn.RetryBackoff;
import io.ferrite.testing.Await;
import io.ferrite.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Producer ids: unique and increasing across blocks and restarts, a SIGKILL right after a block was reserved
 * included; the block after the current one is reserved ahead (at 90% of the current one) on the reserver, never
 * by the caller, which gets {@link ProducerIdSource#NONE_YET} rather than waiting when the ids run out first.
 */
class ProducerIdsTest
{
    @TempDir
    Path dir;

    /** An executor whose tasks run only when the test runs them: what the reserver did is then certain. */
    private static final class HeldExecutor extends AbstractExecutorService
    {
        final Queue<Runnable> queued = new ArrayDeque<>();
        boolean shutdown;

        void runQueued()
        {
            while (!queued.isEmpty())
            {
                queued.poll().run();
            }
        }

        @Override
        public void execute(final Runnable command)
        {
            queued.add(command);
        }

        @Override
        public void shutdown()
        {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow()
        {
            shutdown = true;
            return List.copyOf(queued);
        }

        @Override
        public boolean isShutdown()
        {
            return shutdown;
        }

        @Override
        public boolean isTerminated()
        {
            return shutdown;
        }

        @Override
        public boolean awaitTermination(final long timeout, final TimeUnit unit)
        {
            return true;
        }
    }

    private long reservedOnDisk() throws IOException
    {
        return Long.parseLong(Files.readString(dir.resolve(ProducerIds.FILE)).trim());
    }

    /** The next id, waiting (30 s at most: a reservation's fsync under load) while the next block is being reserved. */
    private static long nextId(final ProducerIds ids)
    {
        return Await.awaitValue(ids::next, id -> id != ProducerIdSource.NONE_YET, Duration.ofSeconds(30), "a producer id");
    }

    @Test
    void idsAreUniqueAndIncreasingAcrossBlocksAndRestarts() throws Exception
    {
        long last = -1;
        for (int restart = 0; restart < 3; restart++)
        {
            try (ProducerIds ids = new ProducerIds(dir))
            {
                for (int i = 0; i < 2500; i++)
                {
                    final long id = nextId(ids);
                    assertTrue(id > last, "id " + id + " after " + last + " (restart " + restart + ")");
                    last = id;
                }
            }
        }
    }

    @Test
    void theNextBlockIsReservedOnTheReserverOnceNinetyPercentAreGiven() throws Exception
    {
        try (ProducerIds ids = new ProducerIds(dir))
        {
            assertEquals(ProducerIds.BLOCK, reservedOnDisk(), "the first block, reserved at start");
            for (int i = 0; i < ProducerIds.BLOCK * 9 / 10; i++)
            {
                assertEquals(i, ids.next());
            }
            Await.await(() -> reservedOnDisk() == 2 * ProducerIds.BLOCK, Duration.ofSeconds(30),
                "the second block reserved ahead, with no further id asked for");
        }
    }

    @Test
    void theCallerNeverWritesAndGetsNoneYetWhenTheIdsRunOutBeforeTheNextBlock() throws Exception
    {
        final HeldExecutor reserver = new HeldExecutor();
        try (ProducerIds ids = new ProducerIds(dir, reserver))
        {
            for (int i = 0; i < ProducerIds.BLOCK; i++)
            {
                assertEquals(i, ids.next());
            }
            assertEquals(1, reserver.queued.size(), "one reservation asked for");
            assertEquals(ProducerIds.BLOCK, reservedOnDisk(), "nothing written by the caller");
            assertEquals(ProducerIdSource.NONE_YET, ids.next(), "no id until the next block is on disk");
            assertEquals(1, reserver.queued.size(), "still the one reservation");

            reserver.runQueued();
            assertEquals(2 * ProducerIds.BLOCK, reservedOnDisk());
            assertEquals(ProducerIds.BLOCK, ids.next());
        }
    }

    /** Makes the next reservation fail: its temporary file cannot be written (a directory stands in its place). */
    private Path blockTheTemporaryFile() throws IOException
    {
        return Files.createDirectory(dir.resolve(ProducerIds.FILE + ".tmp"));
    }

    @Test
    void aFailedReservationIsThrownWhenTheIdsRunOutAndTriedAgain() throws Exception
    {
        final HeldExecutor reserver = new HeldExecutor();
        final AtomicLong clockMs = new AtomicLong();
        try (ProducerIds ids = new ProducerIds(dir, reserver, clockMs::get))
        {
            for (int i = 0; i < ProducerIds.BLOCK; i++)
            {
                ids.next();
            }
            final Path tmp = blockTheTemporaryFile();
            reserver.runQueued();
            assertThrows(IOException.class, ids::next);
            Files.delete(tmp);
            clockMs.addAndGet(RetryBackoff.FIRST_MS);
            assertEquals(ProducerIdSource.NONE_YET, ids.next(), "tried again: not on disk yet");
            reserver.runQueued();
            assertEquals(ProducerIds.BLOCK, ids.next());
        }
    }

    /**
     * A failed reservation is tried again after 50 ms, then 100, 200 ... (Kafka's RPCProducerIdManager waits 50 ms after
     * a failed request), not by every call meanwhile, which answers {@link ProducerIdSource#NONE_YET}; the first failure
     * of the run is logged, the others counted and their number logged at the success.
     */
    @Test
    void aFailedReservationIsTriedAgainAfterAGrowingBackoffNotAtEveryCall() throws Exception
    {
        final HeldExecutor reserver = new HeldExecutor();
        final AtomicLong clockMs = new AtomicLong(1_000);
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream originalErr = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8)); // slf4j-simple's output
        try (ProducerIds ids = new ProducerIds(dir, reserver, clockMs::get))
        {
            for (int i = 0; i < ProducerIds.BLOCK; i++)
            {
                ids.next();
            }
            final Path tmp = blockTheTemporaryFile();
            reserver.runQueued(); // the first failure, at 1000 ms
            assertThrows(IOException.class, ids::next, "the failure, once");
            for (final long delayMs : new long[] {50, 100, 200})
            {
                clockMs.addAndGet(delayMs - 1);
                for (int call = 0; call < 5; call++)
                {
                    assertEquals(ProducerIdSource.NONE_YET, ids.next());
                }
                assertTrue(reserver.queued.isEmpty(), "nothing tried again within " + delayMs + " ms of the failure");
                clockMs.incrementAndGet();
                assertEquals(ProducerIdSource.NONE_YET, ids.next());
                assertEquals(1, reserver.queued.size(), "tried again " + delayMs + " ms after the failure");
                reserver.runQueued(); // fails again
                assertThrows(IOException.class, ids::next);
            }
            Files.delete(tmp);
            clockMs.addAndGet(400);
            assertEquals(ProducerIdSource.NONE_YET, ids.next());
            reserver.runQueued();
            assertEquals(ProducerIds.BLOCK, ids.next());
            assertEquals(2 * ProducerIds.BLOCK, reservedOnDisk());
        }
        finally
        {
            System.setErr(originalErr);
        }
        final String log = captured.toString(StandardCharsets.UTF_8);
        originalErr.print(log);
        assertEquals(1, log.split("cannot reserve producer ids", -1).length - 1, "the first of 4 failures in a row logged:\n" + log);
        assertTrue(log.contains("reserved producer ids 1000 to 1999 in " + dir.resolve(ProducerIds.FILE) + " after 4 failed reservations"),
            log);
    }

    /**
     * A failed reservation that a later one recovered from is not thrown when the ids run out blocks later: that
     * {@link #next} answers {@link ProducerIdSource#NONE_YET} (COORDINATOR_LOAD_IN_PROGRESS), the storage being healthy.
     */
    @Test
    void aFailureRecoveredFromIsNotThrownWhenTheIdsRunOutLater() throws Exception
    {
        final HeldExecutor reserver = new HeldExecutor();
        final AtomicLong clockMs = new AtomicLong();
        try (ProducerIds ids = new ProducerIds(dir, reserver, clockMs::get))
        {
            for (int i = 0; i < ProducerIds.BLOCK * 9 / 10; i++)
            {
                assertEquals(i, ids.next());
            }
            final Path tmp = blockTheTemporaryFile();
            reserver.runQueued(); // the prefetch at 90% fails
            Files.delete(tmp);
            clockMs.addAndGet(RetryBackoff.FIRST_MS);
            assertEquals(ProducerIds.BLOCK * 9 / 10, ids.next(), "an id of the current block; the retry queued");
            reserver.runQueued(); // and it succeeds
            assertEquals(2 * ProducerIds.BLOCK, reservedOnDisk());
            for (long i = ProducerIds.BLOCK * 9 / 10 + 1; i < 2 * ProducerIds.BLOCK; i++)
            {
                assertEquals(i, ids.next());
            }
            assertEquals(1, reserver.queued.size(), "the prefetch of the third block, not run yet");
            assertEquals(ProducerIdSource.NONE_YET, ids.next(), "no id yet, not the failure recovered from");
            reserver.runQueued();
            assertEquals(2 * ProducerIds.BLOCK, ids.next());
        }
    }

    /**
     * A child JVM takes ids as fast as it can, printing each; it is killed with SIGKILL as soon as a block ahead is on
     * disk (the first, second, third in three rounds). Each restart gives ids above every one the killed child printed.
     */
    @Test
    void idsStayUniqueAfterASigkillRightAfterABlockWasReserved() throws Exception
    {
        long last = -1;
        for (int round = 1; round <= 3; round++)
        {
            final long reservedBefore = Files.exists(dir.resolve(ProducerIds.FILE)) ? reservedOnDisk() : 0;
            final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            final Process child = new ProcessBuilder(java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                ProducerIdsTest.class.getName(), dir.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            final AtomicLong printedMax = new AtomicLong(-1);
            final AtomicLong printedMin = new AtomicLong(Long.MAX_VALUE);
            final Thread reader = new Thread(() ->
            {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
                {
                    for (String line = in.readLine(); line != null; line = in.readLine())
                    {
                        final long id = Long.parseLong(line.trim());
                        printedMax.accumulateAndGet(id, Math::max);
                        printedMin.accumulateAndGet(id, Math::min);
                    }
                }
                catch (final IOException | NumberFormatException ex)
                {
                    // the child was killed mid-line: what was read whole counts
                }
            }, "child-ids");
            reader.start();
            try
            {
                // the start reserves one block; the kill follows the (round)th block reserved ahead
                final long target = reservedBefore + (round + 1) * ProducerIds.BLOCK;
                Await.await(() -> Files.exists(dir.resolve(ProducerIds.FILE)) && reservedOnDisk() >= target, Duration.ofSeconds(60),
                    "block ahead " + round + " reserved by the child");
            }
            finally
            {
                child.destroyForcibly().waitFor();
                reader.join(10_000);
            }
            assertTrue(printedMin.get() > last, "round " + round + ": the child's first id " + printedMin.get() + " after " + last);
            last = printedMax.get();
            try (ProducerIds ids = new ProducerIds(dir))
            {
                final long id = nextId(ids);
                assertTrue(id > last, "round " + round + ": id " + id + " after the killed child's " + last);
            }
        }
    }

    /** The child of {@link #idsStayUniqueAfterASigkillRightAfterABlockWasReserved}: prints ids of {@code args[0]} until killed. */
    public static void main(final String[] args) throws Exception
    {
        ChildJvm.haltWithParent();
        final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        final ProducerIds ids = new ProducerIds(Path.of(args[0]));
        while (true)
        {
            final long id = ids.next();
            if (id == ProducerIdSource.NONE_YET)
            {
                Thread.onSpinWait();
                continue;
            }
            out.println(id);
            out.flush();
        }
    }
}
