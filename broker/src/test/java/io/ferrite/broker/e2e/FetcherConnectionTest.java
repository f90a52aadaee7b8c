package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.replica.ReplicaFetcher;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The follower's connection to a leader that is there but never answers (a stopped process, a black hole):
 * a loopback server socket that accepts and reads and never writes, or whose accept queue is full so that
 * a connect hangs. Each test waits on what the fetcher shows (its connections, its failures, its thread),
 * never on time passing.
 */
class FetcherConnectionTest
{
    private static final String TOPIC = "followed";
    private static final int LEADER = 7;
    /** Well under the 30 s defaults: a close that waited one out would miss it. */
    private static final Duration PROMPTLY = Duration.ofSeconds(15);

    @TempDir
    Path dir;
    private RunningBroker node;
    private ServerSocket leader;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong bytesRead = new AtomicLong();
    private final List<Integer> endsSeen = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception
    {
        if (node != null)
        {
            node.close();
        }
        if (leader != null)
        {
            leader.close();
        }
        for (final Socket s : sockets)
        {
            s.close();
        }
    }

    /** A leader that accepts every connection and reads it, answering nothing; counts the ends of its connections. */
    private void silentLeader() throws IOException
    {
        leader = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final Thread acceptor = new Thread(() ->
        {
            while (!leader.isClosed())
            {
                try
                {
                    final Socket s = leader.accept();
                    sockets.add(s);
                    final int index = sockets.size();
                    final Thread reader = new Thread(() -> drain(s, index), "silent-leader-reader-" + index);
                    reader.setDaemon(true);
                    reader.start();
                }
                catch (final IOException ex)
                {
                    return; // closed
                }
            }
        }, "silent-leader");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void drain(final Socket s, final int index)
    {
        final byte[] buffer = new byte[4096];
        try (InputStream in = s.getInputStream())
        {
            int n;
            while ((n = in.read(buffer)) >= 0)
            {
                bytesRead.addAndGet(n);
            }
            endsSeen.add(index); // the follower closed it
        }
        catch (final IOException ignored)
        {
            // closed here at the end of the test
        }
    }

    /**
     * A leader whose accept queue is full: nothing accepts, so a connect to it is not completed. Filled with
     * connections until one is not completed within its timeout.
     */
    private void fullLeader() throws IOException
    {
        leader = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        for (int i = 0; i < 64; i++)
        {
            final Socket filler = new Socket();
            sockets.add(filler);
            try
            {
                filler.connect(leader.getLocalSocketAddress(), 500);
            }
            catch (final SocketTimeoutException full)
            {
                return;
            }
        }
        throw new IllegalStateException("the loopback accept queue never filled up");
    }

    private void startFollower(final Map<String, String> overrides) throws Exception
    {
        final Map<String, String> values = new java.util.HashMap<>(overrides);
        values.put(BrokerConfig.NODE_ID, "2");
        node = new RunningBroker(dir.resolve("node-2"), values);
        try (Admin admin = node.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
        }
        node.broker.leadership().followWithoutController(TOPIC, 0, 0, LEADER, "127.0.0.1", leader.getLocalPort())
            .get(20, TimeUnit.SECONDS);
    }

    private ReplicaFetcher fetcher()
    {
        return node.broker.leadership().fetchers().fetcher(LEADER);
    }

    private static Thread fetcherThread()
    {
        for (final Thread t : Thread.getAllStackTraces().keySet())
        {
            if (t.getName().equals("ferrite-replica-fetcher-" + LEADER))
            {
                return t;
            }
        }
        return null;
    }

    private static boolean inConnect(final Thread t)
    {
        for (final StackTraceElement e : t.getStackTrace())
        {
            if (e.getClassName().endsWith("FetcherChannel") && e.getMethodName().equals("connect"))
            {
                return true;
            }
        }
        return false;
    }

    @Test
    void aLeaderThatNeverAnswersIsDroppedAfterTheSocketTimeoutAndConnectedAgainAfterTheBackoff() throws Exception
    {
        silentLeader();
        startFollower(Map.of(BrokerConfig.REPLICA_SOCKET_TIMEOUT_MS, "300", BrokerConfig.REPLICA_FETCH_BACKOFF_MS, "50"));
        await(() -> fetcher().connects() >= 3 && sockets.size() >= 3, PROMPTLY,
            () -> "three connections to the silent leader, each dropped after its timeout: " + fetcher().connects()
                + " made, " + sockets.size() + " accepted, " + fetcher().failures() + " failures");
        await(() -> endsSeen.contains(1) && endsSeen.contains(2), PROMPTLY,
            () -> "the follower closed its first two connections; ends seen " + endsSeen);
        assertTrue(fetcher().failures() >= 2, "each timeout counted: " + fetcher().failures());
        assertTrue(bytesRead.get() > 0, "the fetch requests were sent");
    }

    @Test
    void stoppingFollowingEndsAWaitForASilentLeaderAtOnce() throws Exception
    {
        silentLeader();
        startFollower(Map.of()); // replica.socket.timeout.ms 30000: a close must not wait it out
        await(() -> bytesRead.get() > 0, PROMPTLY, "the follower's fetch request reached the silent leader");
        final Thread thread = fetcherThread();
        assertNotNull(thread, "the fetcher's thread");
        assertEquals(0, fetcher().failures(), "still waiting for the first answer");
        node.broker.leadership().stopFollowing(TOPIC, 0).get(20, TimeUnit.SECONDS);
        assertNull(fetcher(), "the fetcher of a leader with nothing left to fetch is gone");
        await(() -> !thread.isAlive(), PROMPTLY, "the fetcher's thread ended without waiting out its 30 s read timeout");
        await(() -> endsSeen.contains(1), PROMPTLY, () -> "its connection closed; ends seen " + endsSeen);
    }

    @Test
    void aConnectThatHangsGivesUpAfterTheSetupTimeoutAndTriesAgain() throws Exception
    {
        fullLeader();
        startFollower(Map.of(BrokerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS, "200", BrokerConfig.REPLICA_FETCH_BACKOFF_MS, "50"));
        await(() -> fetcher().failures() >= 3, PROMPTLY,
            () -> "three connects given up after the setup timeout: " + fetcher().failures());
        assertEquals(0, fetcher().connects(), "no connection was ever made to a leader that accepts nothing");
    }

    @Test
    void stoppingFollowingEndsAConnectThatHangsAtOnce() throws Exception
    {
        fullLeader();
        startFollower(Map.of(BrokerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS, "120000"));
        final Thread thread = fetcherThread();
        assertNotNull(thread, "the fetcher's thread");
        await(() -> inConnect(thread), PROMPTLY, "the fetcher's thread in its connect to the leader that accepts nothing");
        node.broker.leadership().stopFollowing(TOPIC, 0).get(20, TimeUnit.SECONDS);
        await(() -> !thread.isAlive(), PROMPTLY, "the fetcher's thread ended without waiting out its connect");
        assertEquals(0, fetcher() == null ? 0 : 1, "no fetcher left for the leader");
    }

    @Test
    void aFetcherOfADeadLeaderEndsWithItsLastPartition() throws Exception
    {
        leader = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        final InetSocketAddress dead = (InetSocketAddress)leader.getLocalSocketAddress();
        leader.close(); // nothing listens there: each connect is refused
        leader = null;
        final Map<String, String> values = new java.util.HashMap<>(Map.of(BrokerConfig.REPLICA_FETCH_BACKOFF_MS, "20"));
        values.put(BrokerConfig.NODE_ID, "2");
        node = new RunningBroker(dir.resolve("node-2"), values);
        try (Admin admin = node.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
        }
        node.broker.leadership().followWithoutController(TOPIC, 0, 0, LEADER, "127.0.0.1", dead.getPort()).get(20, TimeUnit.SECONDS);
        await(() -> fetcher().failures() >= 3, PROMPTLY, () -> "connects refused, tried again: " + fetcher().failures());
        final Thread thread = fetcherThread();
        assertNotNull(thread, "the fetcher's thread");
        node.broker.leadership().stopFollowing(TOPIC, 0).get(20, TimeUnit.SECONDS);
        assertNull(fetcher(), "no fetcher for a leader this node follows nothing from");
        await(() -> !thread.isAlive(), PROMPTLY, "the reconnecting fetcher's thread ended");
    }
}
