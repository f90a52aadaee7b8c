package io.ferrite.broker.admin;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.testing.Await;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The admin agent stepped one duty cycle at a time with an AgentInvoker: what runs when, and who may write the topics. */
class AdminAgentTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private AdminAgent agent;
    private AgentInvoker invoker;
    private final List<Throwable> errors = new ArrayList<>();
    /** The agent's clock: moved by hand. */
    private final AtomicLong now = new AtomicLong(System.currentTimeMillis());

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        agent = new AdminAgent(registry, now::get);
        invoker = new AgentInvoker(errors::add, null, agent);
        invoker.start(); // onStart on this thread: it is the registry's writer from now on
    }

    @AfterEach
    void close() throws Exception
    {
        invoker.close();
        logs.close();
        assertEquals(List.of(), errors);
    }

    @Test
    void aCommandRunsInTheAgentsDutyCycleAndWakesItsWaiterOnce()
    {
        final CompletableFuture<Topic> created = agent.createTopic("orders", 2, Map.of());
        final Probe probe = new Probe(Long.MAX_VALUE);
        agent.submit(probe);
        assertNull(registry.topic("orders"));
        assertFalse(created.isDone());
        assertEquals(0, probe.wakes.get());

        assertEquals(2, invoker.invoke(), "two commands in one duty cycle");
        assertEquals(2, created.join().partitions.length);
        assertEquals(created.join(), registry.topic("orders"));
        assertTrue(probe.isDone());
        assertEquals(1, probe.runs.get());
        assertEquals(1, probe.wakes.get());
        assertEquals(0, invoker.invoke(), "nothing left");
    }

    @Test
    void aCommandWhoseDeadlinePassedBeforeTheAgentTookItNeverRuns()
    {
        final Probe late = new Probe(now.get() - 1);
        agent.submit(late);
        invoker.invoke();
        assertTrue(late.isExpired());
        assertFalse(late.isDone());
        assertEquals(0, late.runs.get());
        assertEquals(1, late.wakes.get(), "its waiter is woken to answer REQUEST_TIMED_OUT");
    }

    @Test
    void aWaiterExpiresAQueuedCommandButNotOneTheAgentTook()
    {
        final Probe queued = new Probe(Long.MAX_VALUE);
        agent.submit(queued);
        assertTrue(queued.expire(), "queued: the waiter's expiry wins");
        invoker.invoke();
        assertEquals(0, queued.runs.get());

        final AtomicReference<Boolean> expiredWhileRunning = new AtomicReference<>();
        final Probe running = new Probe(Long.MAX_VALUE)
        {
            @Override
            protected void run()
            {
                expiredWhileRunning.set(expire());
                super.run();
            }
        };
        agent.submit(running);
        invoker.invoke();
        assertEquals(false, expiredWhileRunning.get(), "once taken, a command runs to its end");
        assertTrue(running.isDone());
        assertFalse(running.isExpired());
    }

    @Test
    void aCommandThatThrowsIsAnsweredWithItsFailureAndTheAgentGoesOn()
    {
        final Probe failing = new Probe(Long.MAX_VALUE)
        {
            @Override
            protected void run()
            {
                throw new IllegalStateException("boom");
            }
        };
        agent.submit(failing);
        final CompletableFuture<Topic> after = agent.createTopic("after", 1, Map.of());
        invoker.invoke();
        assertTrue(failing.isDone());
        assertInstanceOf(IllegalStateException.class, failing.failure.get());
        assertEquals(1, agent.faults());
        assertEquals(1, after.join().partitions.length);
    }

    @Test
    void commandsStillQueuedAtTheEndAreAbandonedAndTheirWaitersWoken()
    {
        final Probe queued = new Probe(Long.MAX_VALUE);
        agent.submit(queued);
        invoker.close();
        assertTrue(queued.isExpired());
        assertEquals(0, queued.runs.get());
        assertEquals(1, queued.wakes.get());
    }

    /**
     * DeleteTopics' removal of the logs on the agent: when the command ends, the topic is gone, its
     * directories renamed out of the way, and its name free for the next command.
     */
    @Test
    void aDeletedTopicsNameIsFreeForTheNextCommand() throws Exception
    {
        final CompletableFuture<Topic> created = agent.createTopic("gone", 2, Map.of());
        invoker.invoke();
        final Topic topic = created.join();
        agent.execute(() ->
        {
            try
            {
                registry.delete(topic);
            }
            catch (final java.io.IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        final CompletableFuture<Topic> again = agent.createTopic("gone", 2, Map.of());
        invoker.invoke();
        final Topic recreated = again.join();
        assertTrue(recreated != topic && registry.topic("gone") == recreated, "the name is the new topic's");
        assertTrue(topic.isDeleted());
        assertTrue(topic.partitions[0].log.isClosed() && topic.partitions[1].log.isClosed(), "the old logs closed");
        assertTrue(topic.partitions[0].log.dir().getFileName().toString().endsWith("-delete"));
    }

    /**
     * Agrona's runner ends its run when it finds its thread interrupted after an idle pass, and an
     * interrupted thread's file-channel work fails: a stray interrupt, while the agent parks or while
     * it runs a command, stops neither the agent nor the commands after it.
     */
    @Test
    void aStrayInterruptStopsNeitherTheAgentOnItsRunnerNorTheCommandsAfterIt() throws Exception
    {
        final AdminAgent running = new AdminAgent(registry); // its runner's thread is the registry's writer from its start
        running.start();
        try
        {
            final CompletableFuture<Thread> started = new CompletableFuture<>();
            running.execute(() -> started.complete(Thread.currentThread()));
            final Thread thread = started.get(10, TimeUnit.SECONDS);
            Await.await(() -> thread.getState() == Thread.State.TIMED_WAITING, Duration.ofSeconds(10), "the agent parked");

            thread.interrupt();
            Await.await(() -> running.faults() == 1 || !thread.isAlive(), Duration.ofSeconds(10),
                "the interrupt seen: counted, or the thread ended");
            assertTrue(thread.isAlive(), "an interrupt while parked ended the agent's thread");
            assertEquals(1, running.createTopic("after-park", 1, Map.of()).get(10, TimeUnit.SECONDS).partitions.length);

            // an interrupt in a command: the next command in the same pass still does its file work
            final CountDownLatch release = new CountDownLatch(1);
            running.execute(() -> awaitQuietly(release));
            running.execute(() -> Thread.currentThread().interrupt());
            final CompletableFuture<Topic> after = running.createTopic("after-command", 2, Map.of());
            release.countDown();
            assertEquals(2, after.get(10, TimeUnit.SECONDS).partitions.length);
            assertEquals(2, running.faults(), "both interrupts counted");
            assertTrue(thread.isAlive());
            assertEquals(1, running.createTopic("later", 1, Map.of()).get(10, TimeUnit.SECONDS).partitions.length);
        }
        finally
        {
            running.close();
        }
    }

    /**
     * The agent's thread ends with an Error (a command's work throws one, and recording its failure
     * throws again, as an OutOfMemoryError met once more would): Agrona's runner rethrows it without
     * calling onClose. The command in hand, the one queued behind it and a later one are answered as
     * failed (their requests get UNKNOWN_SERVER_ERROR) and their waiters woken. Before, the one in hand
     * stayed running and the others queued, for ever: a command taken has no deadline at its waiter.
     */
    @Test
    void whenTheAgentsThreadDiesTheCommandInHandAndTheQueuedAndLaterOnesAreAnsweredAsFailed() throws Exception
    {
        final AdminAgent running = new AdminAgent(registry);
        running.start();
        try
        {
            final CountDownLatch held = new CountDownLatch(1);
            final CountDownLatch release = new CountDownLatch(1);
            running.execute(() ->
            {
                held.countDown();
                awaitQuietly(release);
            });
            assertTrue(held.await(10, TimeUnit.SECONDS));
            final AtomicInteger failures = new AtomicInteger();
            final Probe dying = new Probe(Long.MAX_VALUE)
            {
                @Override
                protected void run()
                {
                    throw new AssertionError("a defect in an admin command");
                }

                @Override
                protected void failed(final Throwable cause)
                {
                    if (failures.incrementAndGet() == 1)
                    {
                        throw new OutOfMemoryError("simulated: met again while recording the first");
                    }
                    super.failed(cause);
                }
            };
            final Probe behind = new Probe(Long.MAX_VALUE);
            running.submit(dying);
            running.submit(behind);
            release.countDown();

            Await.await(() -> dying.isDone() && behind.isDone(), Duration.ofSeconds(10),
                "the command in hand and the one queued behind it answered once the agent's thread died");
            assertInstanceOf(IllegalStateException.class, dying.failure.get(), "failed at last: UNKNOWN_SERVER_ERROR");
            assertEquals(1, dying.wakes.get());
            assertEquals(0, behind.runs.get(), "never run");
            assertInstanceOf(IllegalStateException.class, behind.failure.get());
            assertEquals(1, behind.wakes.get());

            final Probe late = new Probe(Long.MAX_VALUE);
            running.submit(late);
            assertTrue(late.isDone(), "a command for a dead agent is answered at once, as failed");
            assertEquals(0, late.runs.get());
            assertInstanceOf(IllegalStateException.class, late.failure.get());
            assertEquals(1, late.wakes.get());
            assertEquals(0, running.queued(), "a command refused by a dead agent is not left queued: nothing drains it any more");
            final CompletableFuture<Topic> create = running.createTopic("never", 1, Map.of());
            assertTrue(create.isCompletedExceptionally());
            assertNull(registry.topic("never"));
            // the AssertionError (reported by the agent) and the OutOfMemoryError (by Agrona's runner, before it rethrew it)
            assertEquals(2, running.faults());
        }
        finally
        {
            running.close();
        }
    }

    /**
     * Waking a command's waiter throws (an exception: the agent carries on): the outcome was
     * published before the wake, but nothing else would wake that network thread while it waits
     * with no deadline (a command taken has none there). The next pass wakes it again.
     */
    @Test
    void aWakeThatThrowsIsDoneAgainByTheNextPass()
    {
        final AtomicInteger wakes = new AtomicInteger();
        final Probe probe = new Probe(Long.MAX_VALUE, () ->
        {
            if (wakes.incrementAndGet() == 1)
            {
                throw new IllegalStateException("simulated: waking the network thread failed");
            }
        });
        agent.submit(probe);
        invoker.invoke();
        assertEquals(1, errors.size(), "the wake's throw left the pass");
        errors.clear();
        assertTrue(probe.isDone());
        assertEquals(1, probe.runs.get());
        assertEquals(1, wakes.get());
        invoker.invoke();
        assertEquals(2, wakes.get(), "the next pass woke its waiter again");
        invoker.invoke();
        assertEquals(2, wakes.get(), "once");
        assertEquals(1, probe.runs.get());
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    @Test
    void aSecondThreadWritingTheTopicsIsCaught() throws Exception
    {
        boolean assertions = false;
        assert assertions = true;
        assumeTrue(assertions, "the single-writer check is an assertion");
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final Thread other = new Thread(() ->
        {
            try
            {
                registry.create("intruder", 1, Map.of());
            }
            catch (final Throwable ex)
            {
                thrown.set(ex);
            }
        });
        other.start();
        other.join();
        assertInstanceOf(AssertionError.class, thrown.get());
        assertNull(registry.topic("intruder"));
    }

    /** A command that counts its runs and wake-ups. */
    private static class Probe extends AdminCommand
    {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger wakes;
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Probe(final long deadlineMs)
        {
            this(deadlineMs, new AtomicInteger());
        }

        private Probe(final long deadlineMs, final AtomicInteger wakes)
        {
            super(deadlineMs, wakes::incrementAndGet);
            this.wakes = wakes;
        }

        /** With a waker of the test's own ({@link #wakes} then stays 0). */
        Probe(final long deadlineMs, final Runnable waker)
        {
            super(deadlineMs, waker);
            this.wakes = new AtomicInteger();
        }

        @Override
        protected void run()
        {
            runs.incrementAndGet();
        }

        @Override
        protected void failed(final Throwable cause)
        {
            failure.set(cause);
        }
    }
}
