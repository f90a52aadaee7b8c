package io.ferrite.broker.net;

import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.log.AgentErrors;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.NoOpIdleStrategy;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A network thread, as an Agrona {@link Agent}: the owner of its connections and their selector.
 * One {@link #doWork} pass selects (handing each ready connection to the {@link RequestDispatcher},
 * which reads, dispatches and writes), takes over connections the acceptor handed it, drains the
 * commands the log threads returned ({@link CommandReturns}) and polls the responses that wait
 * ({@link DeferredResponses}). A bad connection costs only itself; a defect is reported to the
 * thread's error handler (an {@link AgentErrors}) and, if it was met on a connection, closes that connection.
 *
 * <p>In production {@link #start} runs it on its own thread under an {@link AgentRunner}, where a
 * pass with nothing to do blocks in select. A test may instead step it with an
 * {@link org.agrona.concurrent.AgentInvoker} (never both): then a pass never blocks. {@link #close}
 * stops it after the responses under way are written (a few seconds at most); {@link #onClose}
 * closes every connection and the selector.
 */
public final class NetworkThread implements Agent, AutoCloseable
{
    /**
     * Tests only (null otherwise): told of each connection a network thread takes over and of its TLS channel, so that a
     * test can watch, with weak references, that none is kept once closed (tls review 1, M4). Read once per accept.
     */
    public static volatile java.util.function.Consumer<Object> connectionWatcher;

    /**
     * The longest a pass blocks in select with no deadline due: the bound on how late a stop is
     * seen, at 10 wake-ups a second when idle.
     */
    private static final long MAX_SELECT_MS = 100;
    /**
     * Accepted connections taken over per pass: a burst of thousands (a reconnect storm) is taken
     * over between passes that serve the connections already open, not in one long pass.
     */
    private static final int ACCEPT_LIMIT = 64;
    /** How long {@link #close} lets requests under way finish. */
    private static final long DRAIN_MS = 5_000;

    private final int id;
    private final Selector selector;
    private final Queue<Accepted> incoming = new ConcurrentLinkedQueue<>();
    private final RequestHandler handler;
    private final AgentErrors errors;
    private final Connections connections;
    private final NetworkStats stats = new NetworkStats();
    private final CommandReturns returns;
    private final DeferredResponses deferred;
    private final ThrottledConnections throttled = new ThrottledConnections();
    private final IdleConnections idle;
    /** The time (System.currentTimeMillis) read once in this select pass, at its first ready key: its keys' activity. */
    private long passMs;
    private final RequestDispatcher dispatcher;
    private final NetworkCounters counters;
    private final java.util.function.Consumer<SelectionKey> onKey = this::onKey;
    /** Set by {@link #start} (before the thread starts, which publishes it): only a thread of its own may block. */
    private boolean ownThread;
    private AgentRunner runner;
    private Thread thread;
    private volatile boolean running = true;
    private volatile long drainDeadline;
    private int keysHandled;

    public NetworkThread(final int id, final RequestHandler handler, final int maxRequestBytes) throws IOException
    {
        this(id, handler, maxRequestBytes, NetworkCounters.detached());
    }

    /**
     * A thread with the whole budget of a JVM's one network thread ({@link DirectBudget#perThread}).
     *
     * @param counters this thread's counters (the broker's {@code BrokerCounters.network(id)})
     */
    public NetworkThread(final int id, final RequestHandler handler, final int maxRequestBytes, final NetworkCounters counters)
        throws IOException
    {
        this(id, handler, maxRequestBytes, counters, DirectBudget.perThread(1));
    }

    /**
     * @param directBudgetBytes the direct memory this thread's connections may hold in their first buffers and TLS
     *                          buffers ({@link DirectBudget}; the broker's: {@link DirectBudget#perThread} of its threads)
     */
    public NetworkThread(final int id, final RequestHandler handler, final int maxRequestBytes, final NetworkCounters counters,
        final long directBudgetBytes) throws IOException
    {
        this.id = id;
        this.handler = handler;
        this.counters = counters;
        this.selector = Selector.open();
        this.errors = new AgentErrors("network thread " + id, "the thread carries on");
        this.connections = new Connections(id, selector, stats, counters, new DirectBudget(directBudgetBytes));
        this.returns = new CommandReturns(id, selector);
        this.deferred = new DeferredResponses(connections, errors);
        this.idle = new IdleConnections(connections);
        this.dispatcher = new RequestDispatcher(handler, maxRequestBytes, connections, deferred, throttled, errors, counters);
    }

    /** Each thread's direct-memory budget when a broker has {@code networkThreads} of them ({@link DirectBudget}). */
    public static long directBudget(final int networkThreads)
    {
        return DirectBudget.perThread(networkThreads);
    }

    /** The log threads whose returned commands this thread drains (set before {@link #start}). */
    public void logThreads(final LogThread[] logThreads)
    {
        returns.logThreads(logThreads);
    }

    public int id()
    {
        return id;
    }

    @Override
    public String roleName()
    {
        return "ferrite-network-" + id;
    }

    /**
     * Runs this agent on a thread of its own. Its idle strategy is a no-op because the idle phase
     * is the blocking select inside {@link #doWork}: only epoll can wait for sockets, and every
     * source of work can end that wait (a log thread or the group coordinator with
     * {@code Selector.wakeup}, the acceptor likewise). Aeron's receiver does selectNow and idles
     * in its IdleStrategy instead; here that would either spin a core the log threads need (two
     * cores run five processes' builds and brokers) or add its park time to every request's
     * latency, and each waker would have to unpark the thread as well as wake the selector.
     */
    public void start()
    {
        ownThread = true;
        runner = new AgentRunner(NoOpIdleStrategy.INSTANCE, errors, null, this);
        thread = AgentRunner.startOnThread(runner, r ->
        {
            final Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
    }

    /** Makes the thread look at its pending responses now (data arrived, a group answered). */
    public void wakeup()
    {
        selector.wakeup();
    }

    /** From a log thread, after it put commands on this thread's return queue. */
    public void commandsReturned()
    {
        returns.signal();
    }

    /** Hands over an accepted connection of a PLAINTEXT listener (from the acceptor thread). */
    public void accept(final SocketChannel channel)
    {
        accept(channel, Listener.PLAINTEXT);
    }

    /** Hands over an accepted connection of {@code listener} (from its acceptor's thread). */
    public void accept(final SocketChannel channel, final Listener listener)
    {
        incoming.add(new Accepted(channel, listener));
        selector.wakeup();
    }

    /** A connection handed over and the listener it came in on. */
    private record Accepted(SocketChannel channel, Listener listener)
    {
    }

    /** Connections open on this thread (read by tests and metrics; approximate from other threads). */
    public int connections()
    {
        return connections.count();
    }

    /** The errors this thread met (defects, not bad input). */
    public AgentErrors errors()
    {
        return errors;
    }

    /** The system calls of this thread's responses and its connections' outputs given back. */
    public NetworkStats stats()
    {
        return stats;
    }

    /** The direct memory its connections hold, as its {@link DirectBudget} counts it (tests; this thread, or once it stopped). */
    long directBudgetUsed()
    {
        return connections.budget.used();
    }

    /** Selector wake-ups the log threads gave this thread. */
    long commandWakeups()
    {
        return returns.wakeups();
    }

    @Override
    public int doWork() throws IOException
    {
        // after close(): responses already under way are finished, for a few seconds at most
        if (!running && (deferred.isEmpty() || System.currentTimeMillis() >= drainDeadline))
        {
            throw new AgentTerminationException();
        }
        counters.dutyCycle();
        keysHandled = 0;
        select();
        int work = keysHandled;
        work += registerIncoming();
        work += returns.drain();
        if (!deferred.isEmpty())
        {
            work += deferred.poll(System.currentTimeMillis(), dispatcher);
        }
        if (!throttled.isEmpty())
        {
            work += throttled.poll(System.currentTimeMillis(), dispatcher);
        }
        if (!idle.isEmpty())
        {
            work += idle.expire(System.currentTimeMillis()); // a sweep once per IdleConnections.SCAN_MS at most
        }
        if (Thread.interrupted())
        {
            // Agrona's AgentRunner ends its run on an interrupted idle pass (and select returns at once
            // on an interrupted thread): a stray interrupt must not take this thread's connections down
            errors.onError(NetMessages.interrupted(id));
        }
        // on its own thread the idle phase is the select above (NoOpIdleStrategy), so a pass never
        // reports "no work" to the runner, whose check for an interrupt only runs after such a pass
        return ownThread ? Math.max(1, work) : work;
    }

    private void select() throws IOException
    {
        // keys are handed to onKey as they are found: no selected-key set, no iterator, no garbage
        long timeout = ownThread ? deferred.timeoutMs(MAX_SELECT_MS) : 0;
        if (timeout > 0 && !throttled.isEmpty())
        {
            timeout = throttled.timeoutMs(timeout, System.currentTimeMillis()); // a muted connection reads again on time
        }
        if (timeout > 0 && incoming.isEmpty() && !returns.arm())
        {
            selector.select(onKey, timeout);
        }
        else
        {
            selector.selectNow(onKey);
        }
        returns.disarm();
    }

    private void onKey(final SelectionKey key)
    {
        final Connection connection = (Connection)key.attachment();
        if (!key.isValid())
        {
            return;
        }
        if (keysHandled++ == 0)
        {
            passMs = System.currentTimeMillis(); // once a pass, not a key: no clock read per request
        }
        connection.activeMs = passMs; // its idle time starts again, as in Kafka's Selector
        try
        {
            if (key.isWritable())
            {
                dispatcher.onWritable(connection);
            }
            if (key.isValid() && key.isReadable())
            {
                dispatcher.onReadable(connection);
            }
        }
        catch (final IOException ex)
        {
            // a failed TLS handshake (an untrusted certificate, bytes that are not TLS), direct memory used up, the client
            // gone: that connection only, one line
            connections.closeAfter(connection, ex);
        }
        catch (final InternalError ex)
        {
            // a read error of a mapped page (SIGBUS: EIO, a file cut under its mapping) while a fetch read or copied it:
            // this connection closes, as when a transferTo fails, and the thread's others go on
            errors.onError(ex);
            connections.close(connection, "I/O error reading a mapped segment: " + ex.getMessage(), false);
        }
        catch (final RuntimeException ex)
        {
            dispatcher.failed(connection, ex);
        }
        catch (final Error ex)
        {
            // Kafka's Processor closes the connection whatever it threw and goes on; so does this thread, but for a
            // VirtualMachineError other than a stack overflow; direct memory refused costs only this connection (the rule
            // the deferred paths apply too)
            dispatcher.failed(connection, ex);
        }
    }

    private int registerIncoming()
    {
        int n = 0;
        Accepted accepted;
        while (n < ACCEPT_LIMIT && (accepted = incoming.poll()) != null)
        {
            n++;
            Connection connection = null;
            boolean handedOver = false;
            try
            {
                connection = connections.register(accepted.channel(), accepted.listener());
                if (accepted.listener().sasl())
                {
                    connection.sasl = new SaslAuthenticator(connection, handler);
                    connection.gate = connection.sasl; // until it authenticates
                }
                idle.add(connection, System.currentTimeMillis());
                handedOver = true;
            }
            catch (final DirectMemoryShortage ex)
            {
                connections.refuse(accepted.channel(), ex); // closed, counted, one line
            }
            catch (final IOException | RuntimeException ex)
            {
                // the client may be gone already
                errors.onError(ex);
            }
            finally
            {
                // the channel must not outlive its failed hand-over, whatever failed it (an Error goes on up)
                if (connection == null)
                {
                    Connections.closeQuietly(accepted.channel());
                }
                else if (!handedOver)
                {
                    connections.close(connection, "failed hand-over", false);
                }
            }
        }
        return n;
    }

    /** Closes every connection and the selector: on this thread when it stops, or by the closer if it never ran. */
    @Override
    public void onClose()
    {
        if (!selector.isOpen())
        {
            return;
        }
        connections.closeAll();
        Accepted accepted;
        while ((accepted = incoming.poll()) != null)
        {
            Connections.closeQuietly(accepted.channel());
        }
        try
        {
            selector.close();
        }
        catch (final IOException ex)
        {
            errors.onError(ex);
        }
    }

    /** Stops the thread once the responses under way are written (at most a few seconds), then closes it. */
    @Override
    public void close()
    {
        drainDeadline = System.currentTimeMillis() + DRAIN_MS;
        running = false;
        selector.wakeup();
        if (runner == null)
        {
            onClose(); // never started: nothing under way
            return;
        }
        try
        {
            thread.join(2 * DRAIN_MS); // the agent ends itself after its drain (AgentTerminationException)
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        runner.close();
    }
}
