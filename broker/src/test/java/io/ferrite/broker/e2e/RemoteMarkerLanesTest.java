package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.MarkerRouting;
import io.ferrite.broker.txn.RemoteMarkers;
import io.ferrite.broker.txn.TxnPartition;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Review 1 of txncoord, H2: the markers to other nodes go on a lane per leader ({@code NodeRequests}), so a leader that
 * accepts connections and never answers holds its own markers only; when its exchange fails, the markers queued behind
 * it fail with it (once, not a timeout each), but one whose partition's leader moved meanwhile goes to the new leader.
 * The hung leader is a plain socket that reads nothing; the healthy one a real broker (the markers' producer unknown
 * there: each marker is accepted, NONE). The timeouts are two minutes, so only the lanes can let the healthy leader's
 * marker be answered while the hung one holds its own.
 */
class RemoteMarkerLanesTest
{
    private static final String TOPIC = "laned";
    private static final FetcherSettings SLOW = new FetcherSettings(500, 1, 10 * 1024 * 1024, 1024 * 1024, 1000, 120_000, 120_000,
        65_536);

    @TempDir
    Path dir;

    @Test
    void aLeaderThatNeverAnswersHoldsItsOwnMarkersOnlyAndThoseQueuedBehindItFailOnceOrFollowTheirLeader() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            ServerSocket hung = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 4, (short)1))).all().get(30, TimeUnit.SECONDS);
            final List<Socket> held = new CopyOnWriteArrayList<>();
            final Thread hangs = new Thread(() ->
            {
                try
                {
                    while (!hung.isClosed())
                    {
                        held.add(hung.accept()); // read nothing, answer nothing
                    }
                }
                catch (final IOException ignored)
                {
                    // closed at the test's end
                }
            });
            hangs.setDaemon(true);
            hangs.start();
            final String[] at = broker.bootstrap().split(":");
            final MarkerRouting.Route healthy = new MarkerRouting.Route(1, at[0], Integer.parseInt(at[1]));
            final MarkerRouting.Route stuck = new MarkerRouting.Route(2, "127.0.0.1", hung.getLocalPort());
            final Map<Integer, MarkerRouting.Route> leaders = new ConcurrentHashMap<>(Map.of(0, stuck, 1, stuck, 2, stuck, 3, healthy));
            final Map<String, Integer> answers = new ConcurrentHashMap<>();
            final RemoteMarkers markers = new RemoteMarkers(SLOW, 3, () -> { });
            markers.routeBy((topic, partition) -> leaders.getOrDefault(partition, MarkerRouting.Route.GONE));
            try
            {
                send(markers, stuck, 0, "held", answers);
                Await.await(() -> !held.isEmpty(), Duration.ofSeconds(30), "the hung leader's lane in its first exchange");
                send(markers, stuck, 0, "queued", answers);
                send(markers, stuck, 1, "moved", answers);
                send(markers, stuck, 2, "no leader now", answers);
                send(markers, healthy, 3, "healthy", answers);

                awaitAnswer(markers, answers, "healthy");
                assertEquals(Errors.NONE, answers.get("healthy"), "the healthy leader's marker, answered while the hung one holds its lane");
                assertNull(answers.get("held"), "the hung leader's markers wait for it: " + answers);

                leaders.put(1, healthy); // partition 1's leader moved
                leaders.put(2, MarkerRouting.Route.NO_LEADER); // partition 2 has none now
                for (final Socket s : held)
                {
                    s.close(); // the hung exchange fails
                }
                for (final String what : List.of("held", "queued", "moved", "no leader now"))
                {
                    awaitAnswer(markers, answers, what);
                }
                assertEquals(Errors.REQUEST_TIMED_OUT, answers.get("held"));
                assertEquals(Errors.REQUEST_TIMED_OUT, answers.get("queued"), "failed with the exchange ahead of it, not sent on its own");
                assertEquals(Errors.NONE, answers.get("moved"), "sent to the partition's new leader");
                assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, answers.get("no leader now"), "routed again by the coordinator");
                assertEquals(1, held.size(), "connections the hung leader accepted: the first exchange's only");
            }
            finally
            {
                markers.close();
                hung.close();
                hangs.join(10_000);
            }
        }
    }

    private static void send(final RemoteMarkers markers, final MarkerRouting.Route to, final int partition, final String what,
        final Map<String, Integer> answers)
    {
        markers.send(new RemoteMarkers.Send(to, new TxnPartition(TOPIC, partition), 9000 + partition, (short)0, 0, false, (short)0,
            error -> answers.put(what, error)));
    }

    /** Drains the markers' answers (as the coordinators' agent does each pass) until {@code what}'s is in. */
    private static void awaitAnswer(final RemoteMarkers markers, final Map<String, Integer> answers, final String what)
    {
        Await.await(() ->
        {
            markers.drain();
            return answers.containsKey(what);
        }, Duration.ofSeconds(60), "the answer to the marker " + what);
    }
}
