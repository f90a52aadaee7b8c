package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.testing.Await;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A coordinator that stops leading a {@code __transaction_state} partition forgets its transactions' marker runs
 * ({@link TxnMarkerRuns#forget}); their markers still queued for other nodes in {@link RemoteMarkers} must not go out
 * after that (sent late, after the new coordinator's, one could end the producer's next transaction at the partition:
 * review 1 of txncoord, H1). Two loopback "leaders" made of plain sockets: one accepts and never answers, holding the
 * sender thread in its exchange while a marker of a run is queued behind it; the run is forgotten, the hung leader
 * released; then a probe marker to the second leader, which counts the requests it reads (and drops each connection,
 * answered REQUEST_TIMED_OUT): it must have read the probe alone.
 */
class ForgottenRemoteMarkersTest
{
    @Test
    void aForgottenRunsQueuedRemoteMarkerIsNeverSent() throws Exception
    {
        try (ServerSocket hung = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
            ServerSocket counting = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final List<Socket> held = new CopyOnWriteArrayList<>();
            final AtomicInteger requests = new AtomicInteger();
            final Thread hangs = daemon(() ->
            {
                while (!hung.isClosed())
                {
                    held.add(hung.accept()); // read nothing, answer nothing
                }
            });
            final Thread counts = daemon(() ->
            {
                while (!counting.isClosed())
                {
                    try (Socket s = counting.accept(); DataInputStream in = new DataInputStream(s.getInputStream()))
                    {
                        in.readFully(new byte[in.readInt()]);
                        requests.incrementAndGet(); // counted before the connection is dropped (before the answer)
                    }
                }
            });
            final MarkerRouting.Route hungLeader = new MarkerRouting.Route(2, "127.0.0.1", hung.getLocalPort());
            final MarkerRouting.Route countingLeader = new MarkerRouting.Route(3, "127.0.0.1", counting.getLocalPort());
            final LinkedBlockingQueue<Integer> answers = new LinkedBlockingQueue<>();
            final RemoteMarkers remote = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 1, () -> { });
            try
            {
                final TxnPartition tp = new TxnPartition("data", 0);
                remote.send(new RemoteMarkers.Send(hungLeader, tp, 1, (short)0, 0, true, (short)2, answers::add));
                Await.await(() -> !held.isEmpty(), Duration.ofSeconds(30), "the sender thread held by the hung leader");

                final CachedEpochClock wall = new CachedEpochClock();
                wall.update(1_700_000_000_000L);
                final List<TxnWrite> completed = new ArrayList<>();
                final TxnMarkerRuns runs = new TxnMarkerRuns(null, new TxnCache(new TxnConfig(900_000, 2, 50, 604_800_000L, (short)2)),
                    null, new CoordinatorClock(wall, new CachedNanoClock()), completed::add); // every route remote: no local part
                runs.through((topic, partition) -> countingLeader, remote);
                runs.start(new MarkerJob("t0", 7, (short)3, true, (short)2, Set.of(tp), new TxnWrite("t0", null, TxnWrite.Then.COMPLETED)));
                runs.forget(id -> true); // the partition of t0 is no longer led here

                for (final Socket s : held)
                {
                    s.close(); // the hung exchange ends (REQUEST_TIMED_OUT); the sender thread takes the next marker
                }
                remote.send(new RemoteMarkers.Send(countingLeader, tp, 1, (short)0, 0, true, (short)2, answers::add));
                final List<Integer> got = new ArrayList<>();
                Await.await(() ->
                {
                    remote.drain(); // as the agent does each pass (the forgotten run's answer, if any, completes nothing)
                    answers.drainTo(got);
                    return got.size() == 2;
                }, Duration.ofSeconds(60), "the hung marker's and the probe's answers");
                assertEquals(List.of((int)Errors.REQUEST_TIMED_OUT, (int)Errors.REQUEST_TIMED_OUT), got);
                assertEquals(1, requests.get(), "requests the second leader read: the probe's alone, not the forgotten run's marker");
                assertEquals(List.of(), completed, "a forgotten run completes nothing");
            }
            finally
            {
                remote.close();
                hung.close();
                counting.close();
                hangs.join(10_000);
                counts.join(10_000);
            }
        }
    }

    private interface Io
    {
        void run() throws IOException;
    }

    private static Thread daemon(final Io body)
    {
        final Thread t = new Thread(() ->
        {
            try
            {
                body.run();
            }
            catch (final IOException ignored)
            {
                // the server socket closed at the test's end
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }
}
