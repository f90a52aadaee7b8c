package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.testing.Await;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A coordinator that stops leading a {@code __transaction_state} partition forgets its transactions' marker runs
 * ({@link TxnMarkerRuns#forget}); their markers still queued for other nodes in {@link RemoteMarkers} must not go out
 * after that (sent late, after the new coordinator's, one could end the producer's next transaction at the partition:
 * review 1 of txncoord, H1). A loopback "leader" made of a plain socket: it reads the first request and holds its answer,
 * holding the leader's lane in that exchange while a marker of a run is queued behind it; the run is forgotten, then
 * the answer released (a response header without a body: answered, so the lane goes on with what is queued, which a
 * failed exchange would have failed with it); then a probe marker, whose connection the leader counts the requests of
 * (and drops, answered REQUEST_TIMED_OUT): it must have read the probe alone.
 */
class ForgottenRemoteMarkersTest
{
    @Test
    void aForgottenRunsQueuedRemoteMarkerIsNeverSent() throws Exception
    {
        try (ServerSocket leader = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final List<Socket> held = new CopyOnWriteArrayList<>();
            final CountDownLatch release = new CountDownLatch(1);
            final AtomicInteger requests = new AtomicInteger();
            final Thread serves = daemon(() ->
            {
                final Socket first = leader.accept();
                final DataInputStream firstIn = new DataInputStream(first.getInputStream());
                final byte[] request = new byte[firstIn.readInt()];
                firstIn.readFully(request);
                held.add(first); // its request read, its answer held
                try
                {
                    release.await();
                }
                catch (final InterruptedException e)
                {
                    return;
                }
                final DataOutputStream out = new DataOutputStream(first.getOutputStream());
                out.writeInt(5); // a response header v1 (the request's correlation id, no tagged fields), no body
                out.write(request, 4, 4);
                out.write(0);
                out.flush();
                while (!leader.isClosed())
                {
                    try (Socket s = leader.accept(); DataInputStream in = new DataInputStream(s.getInputStream()))
                    {
                        in.readFully(new byte[in.readInt()]);
                        requests.incrementAndGet(); // counted before the connection is dropped (before the answer)
                    }
                }
            });
            final MarkerRouting.Route leaderRoute = new MarkerRouting.Route(2, "127.0.0.1", leader.getLocalPort());
            final LinkedBlockingQueue<Integer> answers = new LinkedBlockingQueue<>();
            final RemoteMarkers remote = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 1, () -> { });
            try
            {
                final TxnPartition tp = new TxnPartition("data", 0);
                remote.send(new RemoteMarkers.Send(leaderRoute, tp, 1, (short)0, 0, true, (short)2, answers::add));
                Await.await(() -> !held.isEmpty(), Duration.ofSeconds(30), "the leader's lane held by its first connection");

                final CachedEpochClock wall = new CachedEpochClock();
                wall.update(1_700_000_000_000L);
                final List<TxnWrite> completed = new ArrayList<>();
                final TxnMarkerRuns runs = new TxnMarkerRuns(null, new TxnCache(new TxnConfig(900_000, 2, 50, 604_800_000L, (short)2)),
                    null, new CoordinatorClock(wall, new CachedNanoClock()), completed::add); // every route remote: no local part
                runs.through((topic, partition) -> leaderRoute, remote, id -> 0);
                runs.start(new MarkerJob("t0", 7, (short)3, true, (short)2, Set.of(tp), new TxnWrite("t0", null, TxnWrite.Then.COMPLETED)));
                runs.forget(id -> true); // the partition of t0 is no longer led here

                release.countDown(); // the held exchange is answered; the lane takes what is queued next
                final List<Integer> got = new ArrayList<>();
                final AtomicInteger drained = new AtomicInteger();
                Await.await(() ->
                {
                    drained.addAndGet(remote.drain()); // as the agent does each pass (a forgotten run's answer completes nothing)
                    answers.drainTo(got);
                    return got.size() == 1;
                }, Duration.ofSeconds(60), "the held marker's answer");
                remote.send(new RemoteMarkers.Send(leaderRoute, tp, 1, (short)0, 0, true, (short)2, answers::add));
                Await.await(() ->
                {
                    drained.addAndGet(remote.drain());
                    answers.drainTo(got);
                    return got.size() == 2;
                }, Duration.ofSeconds(60), "the probe's answer");
                assertEquals(2, drained.get(), "answers come back: the held marker's and the probe's, none for the forgotten run's");
                assertEquals(Errors.REQUEST_TIMED_OUT, (int)got.get(1), "the probe's connection dropped");
                assertEquals(1, requests.get(), "requests the leader read after the held one: the probe's alone, not the forgotten run's marker");
                assertEquals(List.of(), completed, "a forgotten run completes nothing");
            }
            finally
            {
                remote.close();
                leader.close();
                for (final Socket s : held)
                {
                    s.close();
                }
                serves.join(10_000);
            }
        }
    }

    /** Blocking socket work of a test's stand-in server. */
    interface Io
    {
        void run() throws IOException;
    }

    /** Runs {@code body} on a started daemon thread; an IOException (its socket closed at the test's end) ends it. */
    static Thread daemon(final Io body)
    {
        final Thread t = new Thread(() ->
        {
            try
            {
                body.run();
            }
            catch (final IOException ignored)
            {
                // its socket closed at the test's end
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }
}
