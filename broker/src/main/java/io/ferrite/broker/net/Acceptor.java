package io.ferrite.broker.net;

import io.ferrite.log.AgentErrors;
import io.ferrite.log.GoingOnAfterInterrupt;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
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
    private static final int CLOSE_WAIT_MS = 10_000;

    private final ServerSocketChannel server;
    private final Selector selector;
    private final NetworkThread[] networkThreads;
    /** Its runner's error handler and its own catches' (each distinct error logged once). */
    private final AgentErrors errors = new AgentErrors("ferrite-acceptor", "it keeps accepting");
    private AgentRunner runner;
    /** Set by {@link #close}: no idle select begins after it. */
    private volatile boolean closing;
    private int next;

    public Acceptor(final InetSocketAddress address, final NetworkThread[] networkThreads) throws IOException
    {
        this.server = ServerSocketChannel.open();
        try
        {
            this.server.bind(address);
            this.server.configureBlocking(false);
            this.selector = Selector.open();
            this.server.register(selector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException | RuntimeException ex)
        {
            server.close();
            throw ex;
        }
        this.networkThreads = networkThreads;
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress address() throws IOException
    {
        return (InetSocketAddress)server.getLocalAddress();
    }

    @Override
    public String roleName()
    {
        return "ferrite-acceptor";
    }

    /** Runs this agent on a daemon thread of its own. */
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

    /** Takes up to {@value #ACCEPT_LIMIT} pending connections, each to the next network thread; returns how many. */
    @Override
    public int doWork()
    {
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
                errors.onError(ex); // e.g. out of file descriptors: keep accepting
                break;
            }
            if (channel == null)
            {
                break;
            }
            networkThreads[next].accept(channel);
            next = (next + 1) % networkThreads.length;
            accepted++;
        }
        return accepted;
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
     * (a wake-up) or after {@value #IDLE_SELECT_MS} ms. An interrupt ends the select too; the
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
                    selector.select(key -> { }, IDLE_SELECT_MS);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                errors.onError(ex);
                LockSupport.parkNanos(IDLE_SELECT_MS * 1_000_000L); // no busy loop on a failing selector
            }
        }

        @Override
        public String alias()
        {
            return "accept-select";
        }
    }
}
