package io.ferrite.broker.net;

import io.ferrite.log.AgentErrors;
import io.ferrite.log.GoingOnAfterInterrupt;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Accepts connections on the listener and deals them round-robin to the network threads, as an
 * Agrona {@link Agent}: one {@link #doWork} pass takes up to {@value #ACCEPT_LIMIT} pending
 * connections from the (non-blocking) server socket and hands each to the next network thread. It
 * owns the server socket and its selector, and closes both itself ({@link #onClose}) when it stops.
 *
 * <p>In production {@link #start} runs it on an {@link AgentRunner} whose idle phase is a select on
 * the server socket (at most {@value #IDLE_SELECT_MS} ms; a pending connection or a close ends it):
 * no thread blocks in {@code accept}, so a close never has to close the socket under a blocked
 * thread, and a stray interrupt (cleared in the idle) stops nothing. A test may step it with an
 * {@link org.agrona.concurrent.AgentInvoker} instead (never both).
 *
 * <p>An accept that fails (the process out of file descriptors, EMFILE, or the system, ENFILE) leaves
 * the connection in the backlog, so the listener stays ready: selecting for it again at once would
 * retry accept on every pass, a thread at 100% CPU for as long as the descriptors lack. Instead
 * accepting pauses for {@value #ACCEPT_PAUSE_MS} ms (the listener is not selected meanwhile, and no
 * pass calls accept), then one pass retries; each failure is counted ({@link #failures}) and each kind
 * logged once. The network threads serve their connections meanwhile, and the clients waiting in the
 * backlog are connected already (the kernel completed their handshake): they are taken once accept
 * succeeds again, as in Kafka, whose acceptor does not spin either.
 */
public final class Acceptor implements Agent, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);
    /**
     * Connections taken per pass: the pass stays bounded however many clients reconnect at once (after
     * a restart, all of them), so a close is seen between passes; the same bound as a network thread's
     * take-over of new connections per pass.
     */
    static final int ACCEPT_LIMIT = 64;
    /** The longest idle select: it bounds only a lost wake-up, as a pending connection or a close ends it. */
    static final long IDLE_SELECT_MS = 100;
    /**
     * How long accepting pauses after a failed accept: ten retries a second cost nothing, a descriptor
     * freed meanwhile (a client closing) is used at most this late, and a client in the backlog waits
     * far less than its request timeout (kafka-clients: 30 s).
     */
    static final long ACCEPT_PAUSE_MS = 100;
    private static final long ACCEPT_PAUSE_NS = TimeUnit.MILLISECONDS.toNanos(ACCEPT_PAUSE_MS);
    private static final int CLOSE_WAIT_MS = 10_000;

    private final ServerSocketChannel server;
    private final Selector selector;
    /** The listener's registration: its interest is OP_ACCEPT, and none while accepting pauses. */
    private final SelectionKey acceptKey;
    /** What the pause after a failed accept is timed by (a test's moves by hand). */
    private final NanoClock clock;
    private final NetworkThread[] networkThreads;
    /** The listener whose connections these are (each connection knows it). */
    private final Listener listener;
    /** Its runner's error handler and its own catches' (each distinct error logged once). */
    private final AgentErrors errors;
    private AgentRunner runner;
    /** Set by {@link #close}: no idle select begins after it. */
    private volatile boolean closing;
    private int next;
    /** Whether accepting pauses after a failed accept (agent only), and until when by {@link #clock}. */
    private boolean paused;
    private long resumeAtNs;

    public Acceptor(final InetSocketAddress address, final NetworkThread[] networkThreads) throws IOException
    {
        this(address, networkThreads, Listener.PLAINTEXT, SystemNanoClock.INSTANCE);
    }

    /** An acceptor of {@code listener}'s connections (one per listener, all dealing to the same network threads). */
    public Acceptor(final InetSocketAddress address, final NetworkThread[] networkThreads, final Listener listener) throws IOException
    {
        this(address, networkThreads, listener, SystemNanoClock.INSTANCE);
    }

    /** {@code clock}: what the pause after a failed accept is timed by (a test moves it by hand). */
    Acceptor(final InetSocketAddress address, final NetworkThread[] networkThreads, final NanoClock clock) throws IOException
    {
        this(address, networkThreads, Listener.PLAINTEXT, clock);
    }

    private Acceptor(final InetSocketAddress address, final NetworkThread[] networkThreads, final Listener listener,
        final NanoClock clock) throws IOException
    {
        this.server = ServerSocketChannel.open();
        try
        {
            this.server.bind(address);
            this.server.configureBlocking(false);
            this.selector = Selector.open();
            this.acceptKey = this.server.register(selector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException | RuntimeException ex)
        {
            server.close();
            throw ex;
        }
        this.networkThreads = networkThreads;
        this.listener = listener;
        this.errors = new AgentErrors(roleName(), "it keeps accepting");
        this.clock = clock;
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress address() throws IOException
    {
        return (InetSocketAddress)server.getLocalAddress();
    }

    @Override
    public String roleName()
    {
        return "ferrite-acceptor-" + listener.name();
    }

    /** Runs this agent on a daemon thread of its own, named by its role: {@code ferrite-acceptor-<listener name>}. */
    public void start()
    {
        runner = new AgentRunner(new GoingOnAfterInterrupt(new SelectIdle(),
            () -> errors.onError(new IllegalStateException("the acceptor was interrupted; it goes on"))), errors, null, this);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Takes up to {@value #ACCEPT_LIMIT} pending connections, each to the next network thread; returns
     * how many. Nothing while accepting pauses after a failed accept.
     */
    @Override
    public int doWork()
    {
        if (paused)
        {
            if (clock.nanoTime() - resumeAtNs < 0)
            {
                return 0;
            }
            paused = false;
            acceptKey.interestOps(SelectionKey.OP_ACCEPT);
        }
        int accepted = 0;
        while (accepted < ACCEPT_LIMIT)
        {
            final SocketChannel channel;
            try
            {
                channel = server.accept();
            }
            catch (final ClosedChannelException ex)
            {
                throw new AgentTerminationException(ex); // closed under it: nothing more to accept
            }
            catch (final IOException ex)
            {
                errors.onError(ex); // e.g. out of file descriptors: pause, then keep accepting
                pause();
                break;
            }
            if (channel == null)
            {
                break;
            }
            networkThreads[next].accept(channel, listener);
            next = (next + 1) % networkThreads.length;
            accepted++;
        }
        return accepted;
    }

    /** Stops selecting for and taking connections for {@value #ACCEPT_PAUSE_MS} ms: the listener stays ready while accept fails. */
    private void pause()
    {
        paused = true;
        resumeAtNs = clock.nanoTime() + ACCEPT_PAUSE_NS;
        acceptKey.interestOps(0);
    }

    /** Accepts that failed, and what else it met (each distinct one logged once). */
    public long failures()
    {
        return errors.count();
    }

    /** The owner closes what it owns: the server socket and its selector (on its thread, or by the closer if it never ran). */
    @Override
    public void onClose()
    {
        closeQuietly(server);
        closeQuietly(selector);
    }

    private void closeQuietly(final java.io.Closeable closeable)
    {
        try
        {
            closeable.close();
        }
        catch (final IOException ex)
        {
            errors.onError(ex);
        }
    }

    /** Stops accepting: the agent ends its pass, leaves its select and closes the listener. */
    @Override
    public void close() throws IOException
    {
        if (runner == null)
        {
            onClose(); // never started (or stepped by a test, whose invoker's close ran onClose already)
            return;
        }
        closing = true;
        selector.wakeup(); // ends the idle select at once, and no other begins
        // the runner calls onClose: on the agent's thread after its last pass, or here if it never ran
        runner.close(CLOSE_WAIT_MS, t -> LOG.warn("the acceptor did not stop in {} ms", CLOSE_WAIT_MS));
        // and here in any case (closing twice is harmless): after an Error ended the agent's run, Agrona's
        // runner counts itself closed without calling onClose, which would leave the port bound
        onClose();
    }

    /**
     * The idle phase: a select on the server socket, ended by a pending connection, by {@link #close}
     * (a wake-up) or after {@value #IDLE_SELECT_MS} ms — while accepting pauses, by a wake-up or at the
     * pause's end only (nothing is selected). An interrupt ends the select too; the
     * {@code GoingOnAfterInterrupt} around it clears it before the runner's look, so a stray one stops nothing.
     */
    private final class SelectIdle extends IdleAfterNoWork
    {
        @Override
        protected void waitForWork()
        {
            try
            {
                if (!closing)
                {
                    selector.select(key -> { }, paused ? pauseLeftMs() : IDLE_SELECT_MS);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                errors.onError(ex);
                LockSupport.parkNanos(IDLE_SELECT_MS * 1_000_000L); // no busy loop on a failing selector
            }
        }

        /** The pause's rest in whole ms, rounded up (at least 1: a select of 0 ms would wait for ever). */
        private long pauseLeftMs()
        {
            final long leftNs = resumeAtNs - clock.nanoTime();
            return Math.min(IDLE_SELECT_MS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNs + 999_999)));
        }

        @Override
        public String alias()
        {
            return "accept-select";
        }
    }
}
