package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.WriteTxnMarkersRequestDecoder;
import io.ferrite.wire.message.WriteTxnMarkersResponseEncoder;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
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
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Review 1 of txnsend, LOW 3: a transaction whose markers go to three partitions of a remote leader that refuses each
 * (TRANSACTION_COORDINATOR_FENCED: a coordinator loaded at a later epoch is there) is left prepared once — the first
 * refusal drops its run, the other two answers find it gone and change nothing: {@link TxnMarkerRuns#leftPrepared} counts
 * one transaction, not three. The leader is a loopback socket that reads each WriteTxnMarkers (v2) and answers it FENCED
 * for each partition it names (the three in one request since the markers are batched per leader).
 */
class RefusedRemoteMarkersTest
{
    private static final short VERSION = 2;

    @Test
    void aTransactionRefusedByEachOfItsPartitionsIsLeftPreparedOnce() throws Exception
    {
        try (ServerSocket leader = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final AtomicInteger answered = new AtomicInteger();
            final Thread serves = new Thread(() -> answerEach(leader, answered, new ArrayList<>(),
                (request, partition) -> Errors.TRANSACTION_COORDINATOR_FENCED));
            serves.setDaemon(true);
            serves.start();
            final MarkerRouting.Route route = new MarkerRouting.Route(2, "127.0.0.1", leader.getLocalPort());
            final RemoteMarkers remote = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 1, () -> { });
            try
            {
                final CachedEpochClock wall = new CachedEpochClock();
                wall.update(1_700_000_000_000L);
                final List<TxnWrite> completed = new ArrayList<>();
                final TxnMarkerRuns runs = new TxnMarkerRuns(null, new TxnCache(new TxnConfig(900_000, 2, 50, 604_800_000L, (short)2)),
                    null, new CoordinatorClock(wall, new CachedNanoClock()), completed::add); // every route remote: no local part
                runs.through((topic, partition) -> route, remote, id -> 5);
                final Set<TxnPartition> partitions = Set.of(new TxnPartition("data", 0), new TxnPartition("data", 1),
                    new TxnPartition("data", 2));
                runs.start(new MarkerJob("t0", 7, (short)3, true, (short)2, partitions, new TxnWrite("t0", null, TxnWrite.Then.COMPLETED)));
                final AtomicInteger drained = new AtomicInteger();
                await(() ->
                {
                    drained.addAndGet(remote.drain()); // as the agent does each pass
                    return drained.get() == 3;
                }, Duration.ofSeconds(60), () -> "the three answers applied (" + drained.get() + ", the leader answered " +
                    answered.get() + ")");
                assertEquals(3, answered.get(), "each partition's marker reached the leader and was refused");
                assertEquals(1, runs.leftPrepared(), "transactions left prepared: one, refused by three partitions");
                assertEquals(List.of(), completed, "a transaction left prepared does not complete");
            }
            finally
            {
                remote.close();
                leader.close();
                serves.join(10_000);
            }
        }
    }

    /**
     * Review M3: a transaction's markers to one leader leave in one request ({@link TxnMarkerRuns#start}'s flush), and so
     * do the retries due at one tick. The leader answers the first request NONE for partition 0 and NOT_ENOUGH_REPLICAS
     * for partitions 1 and 2, the next NONE; the clock then steps past the backoff and one tick sends both retries.
     */
    @Test
    void aTransactionsMarkersAndATicksRetriesToOneLeaderGoInOneRequest() throws Exception
    {
        try (ServerSocket leader = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final AtomicInteger answered = new AtomicInteger();
            final List<Integer> perRequest = java.util.Collections.synchronizedList(new ArrayList<>());
            final Thread serves = new Thread(() -> answerEach(leader, answered, perRequest,
                (request, partition) -> request == 0 && partition > 0 ? Errors.NOT_ENOUGH_REPLICAS : Errors.NONE));
            serves.setDaemon(true);
            serves.start();
            final MarkerRouting.Route route = new MarkerRouting.Route(2, "127.0.0.1", leader.getLocalPort());
            final RemoteMarkers remote = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 1, () -> { });
            try
            {
                final CachedEpochClock wall = new CachedEpochClock();
                wall.update(1_700_000_000_000L);
                final CoordinatorClock clock = new CoordinatorClock(wall, new CachedNanoClock());
                final List<TxnWrite> completed = new ArrayList<>();
                final TxnMarkerRuns runs = new TxnMarkerRuns(null, new TxnCache(new TxnConfig(900_000, 2, 50, 604_800_000L, (short)2)),
                    null, clock, completed::add);
                runs.through((topic, partition) -> route, remote, id -> 5);
                final Set<TxnPartition> partitions = Set.of(new TxnPartition("data", 0), new TxnPartition("data", 1),
                    new TxnPartition("data", 2));
                final TxnWrite completes = new TxnWrite("t0", null, TxnWrite.Then.COMPLETED);
                runs.start(new MarkerJob("t0", 7, (short)3, true, (short)2, partitions, completes));
                final AtomicInteger drained = new AtomicInteger();
                await(() ->
                {
                    drained.addAndGet(remote.drain());
                    return drained.get() == 3;
                }, Duration.ofSeconds(60), () -> "the three answers applied (" + drained.get() + ")");
                assertEquals(List.of(3), perRequest, "markers in each request: the transaction's three in one");
                assertEquals(List.of(), completed, "two partitions still to retry");

                runs.tick(clock.nowMs() + RetryBackoff.MAX_MS); // both retries due
                await(() ->
                {
                    drained.addAndGet(remote.drain());
                    return drained.get() == 5;
                }, Duration.ofSeconds(60), () -> "the two retries' answers applied (" + drained.get() + ")");
                assertEquals(List.of(3, 2), perRequest, "markers in each request: the tick's two retries in one");
                assertEquals(List.of(completes), completed, "every partition's marker written: completed");
            }
            finally
            {
                remote.close();
                leader.close();
                serves.join(10_000);
            }
        }
    }

    /** A leader's answer to the marker for {@code partition} in its {@code request}-th request (from 0). */
    private interface Answers
    {
        short error(int request, int partition);
    }

    /**
     * Answers each WriteTxnMarkers on each connection, each partition it names with {@code errors}' error; counts the
     * partitions answered, and adds each request's count to {@code perRequest}.
     */
    private static void answerEach(final ServerSocket leader, final AtomicInteger answered, final List<Integer> perRequest,
        final Answers errors)
    {
        final WriteTxnMarkersRequestDecoder request = new WriteTxnMarkersRequestDecoder();
        final WriteTxnMarkersResponseEncoder response = new WriteTxnMarkersResponseEncoder();
        final UnsafeBuffer out = new UnsafeBuffer(new byte[4096]);
        try (Socket s = leader.accept(); DataInputStream in = new DataInputStream(s.getInputStream());
            DataOutputStream answers = new DataOutputStream(s.getOutputStream()))
        {
            while (true)
            {
                final byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                final UnsafeBuffer buffer = new UnsafeBuffer(frame);
                // header v2: api key, version, correlation id, client id (int16 length), no tagged fields
                final int correlationId = buffer.getInt(4, java.nio.ByteOrder.BIG_ENDIAN);
                final int body = 8 + 2 + buffer.getShort(8, java.nio.ByteOrder.BIG_ENDIAN) + 1;
                request.wrap(buffer, body, frame.length, VERSION);
                // one marker entry of one topic (the transaction's three partitions go in one request to their leader)
                final WriteTxnMarkersRequestDecoder.WritableTxnMarker marker = request.markers().next();
                final WriteTxnMarkersRequestDecoder.WritableTxnMarkerTopic topic = marker.topics().next();
                final int count = topic.partitionIndexesCount();
                final WriteTxnMarkersResponseEncoder.WritableTxnMarkerPartitionResult each = response.wrap(out, 0, VERSION).markers(1)
                    .next().producerId(marker.producerId()).topics(1).next().name(topic.name()).partitions(count);
                for (int i = 0; i < count; i++)
                {
                    each.next().partitionIndex(topic.partitionIndexes(i)).errorCode(errors.error(perRequest.size(),
                        topic.partitionIndexes(i)));
                }
                final int length = response.finish();
                answered.addAndGet(count); // before the answer leaves: the test reads them once it is applied
                perRequest.add(count);
                answers.writeInt(4 + 1 + length); // response header v1: the correlation id, no tagged fields
                answers.writeInt(correlationId);
                answers.write(0);
                answers.write(out.byteArray(), 0, length);
                answers.flush();
            }
        }
        catch (final IOException ignored)
        {
            // the lane's connection or the server socket closed at the test's end
        }
    }
}
