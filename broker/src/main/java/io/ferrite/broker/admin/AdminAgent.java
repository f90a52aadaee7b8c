package io.ferrite.broker.admin;

import io.ferrite.broker.net.IdleAfterNoWork;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.GoingOnAfterInterrupt;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.SystemEpochClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The owner of the topics: the one thread that writes the {@link TopicRegistry} — creates topics,
 * adds partitions, deletes topics and changes their configs — so that the file-system work this
 * takes (partition directories, {@code partition.metadata}, config files, each fsynced) never runs
 * on a network thread. A CreateTopics of 100 topics costs the connections of its network thread
 * nothing; only its own answer waits (Kafka likewise hands these to its controller).
 *
 * <p>Network threads (and the group coordinator, for its offsets topic) {@link #submit} an
 * {@link AdminCommand} on a many-to-one queue; one {@link #doWork} pass runs at most
 * {@value #DRAIN_LIMIT} of them in order, each to its end, and wakes the network thread waiting for
 * each; then, with a journal, one bounded chunk of the answered creations' files ({@link PendingCreations}).
 * Readers of the registry (every request) read its published immutable tables and take no lock. In
 * production {@link #start} runs it on an Agrona {@link AgentRunner} of its own, parked while idle and
 * unparked by a submit; a test steps it with an {@link org.agrona.concurrent.AgentInvoker} (never both).
 *
 * <p>A stray interrupt of its thread stops it not: Agrona's runner ends its run when it finds the
 * thread interrupted after an idle pass, and an interrupted thread's next file-channel operation
 * fails (closing that channel), so every later command would fail or never run. The interrupt costs
 * at most the command or task in hand ({@link #goOnAfterInterrupt}, after each of them and after a
 * park); a close still stops the agent, as its runner stops looping before it interrupts.
 *
 * <p>A command's work that throws — an {@link Error} too — costs that command only (its request's
 * items UNKNOWN_SERVER_ERROR). Should something leave a pass with a command in hand (recording its
 * failure, or waking its network thread, throws), the next pass ends that command, or if it ended,
 * wakes its network thread again; and should an Error end the agent's thread (Agrona's runner
 * rethrows it and skips {@link #onClose}), the dying thread does the same, answers every command
 * still queued as failed, and every later {@link #submit} is answered so at once — as the group
 * agent refuses its calls once its thread ended. Without this they would wait for ever: a command
 * taken, or one without a deadline (Metadata's auto-creation, the offsets topic), has none at its waiter.
 */
public final class AdminAgent implements Agent, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(AdminAgent.class);
    /** Commands per pass (then a chunk of pending files): a pass is a bound on how late a close is seen. */
    private static final int DRAIN_LIMIT = 16;
    /** The longest an idle agent parks without a submit: the bound on how late a stop is seen. */
    static final long IDLE_PARK_MS = 100;
    private static final long IDLE_PARK_NS = TimeUnit.MILLISECONDS.toNanos(IDLE_PARK_MS);
    private static final long CLOSE_WAIT_MS = 10_000;

    private final TopicRegistry topics;
    private final EpochClock clock;
    private final CreationJournal journal;
    /** The journaled topics whose files are made between commands (null without a journal). */
    private final PendingCreations creations;
    /** The commands submitted, the agent's wake-up and their answers once it stopped. */
    private final AdminQueue commands = new AdminQueue();
    private final AtomicLong faults = new AtomicLong();
    private final ErrorHandler errors = this::onError;
    private AgentRunner runner;
    /** Single writer (the agent); volatile so tests read it from their thread. */
    private volatile long ran;
    /**
     * The command taken and not seen to its end (agent only): in no queue, so only this reaches it if
     * a throw leaves the pass meanwhile; {@link #inHandRecorded}: its run or failure was recorded.
     */
    private AdminCommand inHand;
    private boolean inHandRecorded;

    public AdminAgent(final TopicRegistry topics)
    {
        this(topics, SystemEpochClock.INSTANCE, null);
    }

    public AdminAgent(final TopicRegistry topics, final CreationJournal journal) // the broker's: wall clock, journal (null: none)
    {
        this(topics, SystemEpochClock.INSTANCE, journal);
    }

    /** {@code clock}: what command deadlines are due by (wall time, as the network threads set them); a test steps it by hand. */
    public AdminAgent(final TopicRegistry topics, final EpochClock clock)
    {
        this(topics, clock, null);
    }

    /**
     * {@code journal}: the single-node broker's {@link CreationJournal}, which the agent then writes alone (CreateTopics
     * is answered once journaled, its files made after the answer); null: creations are answered
     * after their files (cluster mode, whose metadata log is the durable record, and embedders).
     */
    public AdminAgent(final TopicRegistry topics, final EpochClock clock, final CreationJournal journal)
    {
        this.topics = topics;
        this.clock = clock;
        this.journal = journal;
        this.creations = journal == null ? null : new PendingCreations(topics, journal, this::reportInterrupt);
    }

    /** The creation journal (agent thread only), or null when creations are answered after their files. */
    public CreationJournal journal()
    {
        return journal;
    }

    /** The journaled topics whose files are not made yet (agent thread only), or null without a journal. */
    public PendingCreations creations()
    {
        return creations;
    }

    @Override
    public String roleName()
    {
        return "ferrite-admin";
    }

    /** Runs this agent on a daemon thread of its own. */
    public void start()
    {
        // a stray interrupt cleared after the park, before the runner's look at it after an idle pass
        runner = new AgentRunner(new GoingOnAfterInterrupt(new Idle(), this::reportInterrupt), errors, null, this);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread t = new Thread(() -> runToEnd(r));
            t.setDaemon(true);
            return t;
        });
    }

    /** The agent's thread: its runner's loop and, however that ends, {@link #stopped}. */
    private void runToEnd(final Runnable loop)
    {
        Throwable ended = null;
        try
        {
            loop.run();
        }
        catch (final Throwable fault) // reported by the runner already
        {
            ended = fault;
            throw fault;
        }
        finally
        {
            stopped(ended);
        }
    }

    /**
     * From any thread: queues {@code command}; the agent runs it in submission order and wakes its waiter. Once the
     * agent stopped, the command is answered here and now (failed, or after a close abandoned): {@link AdminQueue}.
     */
    public void submit(final AdminCommand command)
    {
        commands.submit(command);
    }

    /**
     * For embedders and tests (never a network thread): creates a topic through the agent; the future completes once it
     * is created, exceptionally as {@link TopicRegistry#create} throws, or for a name journaled whose files failed.
     */
    public CompletableFuture<Topic> createTopic(final String name, final int partitions, final Map<String, String> overrides)
    {
        final CompletableFuture<Topic> created = new CompletableFuture<>();
        submit(new AdminCommand(Long.MAX_VALUE, () -> { })
        {
            @Override
            protected void run()
            {
                try
                {
                    final boolean made = creations != null && !creations.isGrowing(name) && creations.makeThrough(name);
                    final boolean failed = topics.creatingId(name) != null || creations != null && creations.filesFailed(name);
                    if (made && !failed && topics.topic(name) != null)
                    {
                        created.complete(topics.topic(name)); // answered to a CreateTopics and pending: made first, that one
                        return;
                    }
                    if (failed) // its files failed: it keeps its journaled id (made at the next start), offline meanwhile
                    {
                        throw new java.io.IOException("the files of topic " + name + ", created, failed: made at the next start");
                    }
                    created.complete(topics.create(name, partitions, overrides));
                }
                catch (final Exception ex)
                {
                    created.completeExceptionally(ex);
                }
            }

            @Override
            protected void failed(final Throwable cause)
            {
                created.completeExceptionally(cause);
            }
        });
        return created;
    }

    /** For tests: the commands in the queue. */
    int queued()
    {
        return commands.size();
    }

    /**
     * Runs {@code task} on the agent, between commands, in the order given, without waiting: how the cluster's metadata
     * changes reach the topic registry, whose writer the agent is ({@code cluster.ClusterPartitions}), and how tests
     * step the agent. A task must not block (it holds the agent still) and handles its own failures: one it throws is
     * logged and counted with the {@link #faults}.
     */
    public void execute(final Runnable task)
    {
        submit(new AdminCommand(Long.MAX_VALUE, () -> { })
        {
            @Override
            protected void run()
            {
                task.run();
            }

            @Override
            protected void failed(final Throwable cause)
            {
            }
        });
    }

    /** Commands run so far (for tests: the agent's progress, read on its thread or after it stopped). */
    public long commandsRun()
    {
        return ran;
    }

    /** Commands and tasks whose work threw, and interrupts of the agent's thread (each logged). */
    public long faults()
    {
        return faults.get();
    }

    @Override
    public void onStart()
    {
        topics.writer(Thread.currentThread());
        commands.consumer(Thread.currentThread());
    }

    @Override
    public int doWork()
    {
        int work = 0;
        if (inHand != null)
        {
            // the last pass was left by a throw while this command was in hand, and the agent carried on
            endInHand(new IllegalStateException("the admin agent failed while running the command"));
            work++;
        }
        AdminCommand command;
        final long nowMs = clock.time();
        while (work < DRAIN_LIMIT && (command = commands.poll()) != null)
        {
            work++;
            if (!command.take(nowMs))
            {
                continue; // expired while queued: it never runs, its waiter answers REQUEST_TIMED_OUT
            }
            inHand = command;
            inHandRecorded = false;
            try
            {
                command.run();
            }
            catch (final Throwable fault)
            {
                onError(fault);
                command.failed(fault);
            }
            inHandRecorded = true;
            goOnAfterInterrupt();
            ran = ran + 1;
            command.finish();
            inHand = null;
        }
        if (creations != null)
        {
            work += creations.makeChunk(); // then a chunk of the journaled topics' files; one topic's failure costs it alone
            goOnAfterInterrupt();
        }
        return work;
    }

    /** On the agent's thread: ends the command in hand ({@link AdminCommand#endAtLast}); a throw costs it alone. */
    private void endInHand(final Throwable cause)
    {
        final AdminCommand command = inHand;
        inHand = null;
        try
        {
            command.endAtLast(inHandRecorded, cause);
        }
        catch (final Throwable fault)
        {
            reportQuietly(fault);
        }
    }

    /**
     * Clears an interrupt of the agent's thread (a stray one: a close stops the runner's loop first),
     * so that it ends neither the run nor the next command's file work. Counted with the faults.
     */
    private void goOnAfterInterrupt()
    {
        if (Thread.interrupted())
        {
            reportInterrupt();
        }
    }

    private void reportInterrupt()
    {
        faults.incrementAndGet();
        LOG.warn("the admin agent was interrupted; it goes on");
    }

    private void onError(final Throwable fault)
    {
        faults.incrementAndGet();
        LOG.error("an admin command failed", fault);
    }

    /** {@link #onError}, throwing nothing (on a dying thread: one command's trouble must not leave the others unanswered). */
    private void reportQuietly(final Throwable fault)
    {
        try
        {
            onError(fault);
        }
        catch (final Throwable ignored)
        {
            // the logger failed too: counted at least, if that much was done
        }
    }

    /** After the last pass: the commands still queued will not run; their waiters answer as for a timeout. */
    @Override
    public void onClose()
    {
        commands.stop(null);
        commands.refuseQueued(this::reportQuietly);
    }

    /**
     * The agent's thread ends (after {@link #onClose}, or without it when an Error ended the runner's
     * loop): the command in hand is ended, and every command still queued or submitted from now on is
     * answered as failed with {@code ended} as the cause (abandoned after a close), on this thread, the
     * queue's only consumer.
     */
    private void stopped(final Throwable ended)
    {
        Throwable death = null;
        if (ended != null)
        {
            try
            {
                death = new IllegalStateException("the admin agent's thread ended: " + ended, ended);
            }
            catch (final Throwable noRoom) // an OutOfMemoryError ended it, and this one too: still stopped below
            {
                death = ended;
            }
        }
        commands.stop(death);
        if (inHand != null)
        {
            endInHand(death != null ? death : new IllegalStateException("the admin agent closed while running the command"));
        }
        commands.refuseQueued(this::reportQuietly);
    }

    /** Stops the agent's thread (after the network threads: their answers under way may still need it), then closes the journal. */
    @Override
    public void close()
    {
        if (runner == null)
        {
            onClose();
        }
        else
        {
            // seen at the end of the current park: 100 ms at most
            runner.close((int)CLOSE_WAIT_MS, ignored -> LOG.warn("the admin agent did not stop in {} ms", CLOSE_WAIT_MS));
        }
        if (journal != null)
        {
            try
            {
                journal.close();
            }
            catch (final java.io.IOException ex)
            {
                LOG.warn("closing the creation journal failed", ex);
            }
        }
    }

    /**
     * Parks until a submit unparks the thread. {@link AdminQueue#submit} reads the consumer thread after its offer
     * and the agent published {@code thread} before its first look at the queue (both volatile), so
     * a submit that came after that look unparks the thread, and an unpark is remembered by a park
     * that has not begun yet: a command never waits out a park.
     */
    private final class Idle extends IdleAfterNoWork
    {
        @Override
        protected void waitForWork()
        {
            if (commands.isEmpty())
            {
                java.util.concurrent.locks.LockSupport.parkNanos(IDLE_PARK_NS);
            }
        }

        @Override
        public String alias()
        {
            return "admin-park";
        }
    }
}
