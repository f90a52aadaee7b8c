package io.ferrite.broker.net;

import io.ferrite.log.AgentErrors;
import io.ferrite.testing.ChildJvm;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;

import java.io.FileInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The acceptor while accept fails for real: a child JVM under {@code ulimit -n 1024} uses every file
 * descriptor left, with a client waiting in the listener's backlog, and steps its acceptor with an
 * {@link AgentInvoker} on a clock moved by hand. Before, every pass retried accept (each failing with
 * EMFILE, counted), which on its runner is a thread at 100% CPU: the listener stays ready while the
 * connection stays in the backlog. Now one failed accept pauses accepting; one pass retries at the
 * pause's end, and once descriptors are free the waiting client is taken.
 */
class AcceptorOutOfDescriptorsTest
{
    private static final RequestHandler NONE = (api, version, in, offset, limit, out, outOffset, connection) -> outOffset;

    @Test
    void aFailingAcceptIsRetriedOncePerPauseNotOnEveryPassAndTheWaitingClientIsTakenAfterIt() throws Exception
    {
        final Map<String, String> steps = runChild();
        assertEquals("accepted=0 failures=1", steps.get("failed"), "the first pass after the descriptors ran out: " + steps);
        assertEquals("accepted=0 failures=1", steps.get("paused"), "three more passes: no accept tried (before: each failed) " + steps);
        assertEquals("accepted=0 failures=1", steps.get("paused-to-its-last-ns"), steps.toString());
        assertEquals("accepted=0 failures=2", steps.get("retried-at-the-pause-end"), "one accept tried, failing still " + steps);
        assertEquals("accepted=0 failures=2", steps.get("paused-again"), steps.toString());
        assertEquals("accepted=0 failures=2", steps.get("descriptors-freed-while-paused"), steps.toString());
        assertEquals("accepted=1 failures=2", steps.get("resumed"), "the waiting client taken at the pause's end " + steps);
        assertEquals("2", steps.get("network-thread-connections"), steps.toString());
        assertEquals("0", steps.get("escaped"), "errors that left a pass " + steps);
    }

    /** Runs {@link #main} under a low descriptor limit; its lines {@code STEP name value}, by name. */
    private static Map<String, String> runChild() throws IOException, InterruptedException
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // bash sets the soft and the hard limit, so the JVM cannot raise it again (-XX:+MaxFDLimit)
        final Process process = new ProcessBuilder("bash", "-c", "ulimit -n 1024 && exec \"$0\" \"$@\"", java,
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx128m", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), AcceptorOutOfDescriptorsTest.class.getName())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        final List<String> lines = new ArrayList<>();
        final Map<String, String> steps = ChildJvm.steps(process, lines);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the child ended");
        assertEquals(0, process.exitValue(), "the child's exit status; its output: " + lines);
        return steps;
    }

    /** The child: everything on this thread; nothing allocated or loaded while the descriptors are out but what a pass does. */
    public static void main(final String[] args) throws Exception
    {
        final AtomicLong nowNs = new AtomicLong();
        final List<Throwable> escaped = new ArrayList<>();
        final NetworkThread network = new NetworkThread(0, NONE, 1 << 20);
        final AgentInvoker networkInvoker = new AgentInvoker(escaped::add, null, network);
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {network}, nowNs::get);
        final AgentInvoker invoker = new AgentInvoker(escaped::add, null, acceptor);
        networkInvoker.start();
        invoker.start();
        final InetSocketAddress address = acceptor.address();

        // while descriptors are free: a first client taken, and a report of an error made once, so that
        // the classes a pass and a failure's report use are loaded (loading may open a jar: a descriptor)
        final SocketChannel first = SocketChannel.open(address);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int taken = 0;
        while (taken == 0 && System.nanoTime() < deadline)
        {
            taken = invoker.invoke();
        }
        networkInvoker.invoke();
        new AgentErrors("warm-up").onError(new IOException("warm-up: the reporting path loaded"));
        final SocketChannel waiting = SocketChannel.open(address); // connected: in the listener's backlog

        final List<FileInputStream> filler = new ArrayList<>();
        try
        {
            while (true)
            {
                filler.add(new FileInputStream("/dev/null"));
            }
        }
        catch (final IOException descriptorsOut)
        {
            // every descriptor is in use: accept fails with EMFILE
        }

        step("failed", invoker.invoke(), acceptor);
        int acceptedWhilePaused = 0;
        for (int i = 0; i < 3; i++)
        {
            acceptedWhilePaused += invoker.invoke();
        }
        step("paused", acceptedWhilePaused, acceptor);
        nowNs.addAndGet(TimeUnit.MILLISECONDS.toNanos(Acceptor.ACCEPT_PAUSE_MS) - 1);
        step("paused-to-its-last-ns", invoker.invoke(), acceptor);
        nowNs.addAndGet(1);
        step("retried-at-the-pause-end", invoker.invoke(), acceptor);
        step("paused-again", invoker.invoke(), acceptor);
        // two descriptors: one for the waiting client, and one that the pass's next accept (which finds
        // the backlog empty) takes a moment: Linux allocates the descriptor before it looks at the backlog
        filler.remove(filler.size() - 1).close();
        filler.remove(filler.size() - 1).close();
        step("descriptors-freed-while-paused", invoker.invoke(), acceptor);
        nowNs.addAndGet(TimeUnit.MILLISECONDS.toNanos(Acceptor.ACCEPT_PAUSE_MS));
        step("resumed", invoker.invoke(), acceptor);
        networkInvoker.invoke();
        System.out.println("STEP network-thread-connections " + network.connections());

        for (final FileInputStream f : filler)
        {
            f.close();
        }
        first.close();
        waiting.close();
        invoker.close();
        networkInvoker.close();
        System.out.println("STEP escaped " + escaped.size());
        System.out.flush();
    }

    private static void step(final String name, final int accepted, final Acceptor acceptor)
    {
        System.out.println("STEP " + name + " accepted=" + accepted + " failures=" + acceptor.failures());
    }
}
