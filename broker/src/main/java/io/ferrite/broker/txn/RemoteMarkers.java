package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.replica.FetcherChannel;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import io.ferrite.wire.message.WriteTxnMarkersRequestEncoder;
import io.ferrite.wire.message.WriteTxnMarkersResponseDecoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The transaction coordinator's markers for partitions led by other nodes, in a cluster (issue 14): each one a
 * WriteTxnMarkers request to the partition's leader, sent by a thread of its own over the node-to-node connection the
 * follower fetchers use ({@link FetcherChannel}: connect and request bounded by {@code socket.connection.setup.timeout.ms}
 * and {@code replica.socket.timeout.ms}), one connection per leader, kept. The leader's answer for the partition, or
 * REQUEST_TIMED_OUT when the connection failed (the marker is then sent again after its backoff, to the leader the image
 * names then, as Kafka retries a marker whose leader moved), is handed back to the coordinators' agent, which applies it
 * in its next pass ({@link #drain}). One request at a time: a leader that does not answer holds the others up to the
 * request timeout.
 */
public final class RemoteMarkers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(RemoteMarkers.class);
    private static final short VERSION = 2;
    private static final int FRAME_BYTES = 4096;

    /** A marker on its way (agent to the sender thread); {@code then} runs on the agent with the partition's error. */
    public record Send(MarkerRouting.Route to, TxnPartition tp, long producerId, short producerEpoch, int coordinatorEpoch,
        boolean commit, short transactionVersion, java.util.function.IntConsumer then)
    {
    }

    private final FetcherSettings settings;
    private final String clientId;
    private final Runnable wakeAgent;
    private final LinkedBlockingQueue<Send> sends = new LinkedBlockingQueue<>();
    private final ConcurrentLinkedQueue<Runnable> answers = new ConcurrentLinkedQueue<>();
    /** The connections by leader address (made by the sender thread, closed by {@link #close} too: concurrent). */
    private final Map<InetSocketAddress, FetcherChannel> channels = new ConcurrentHashMap<>();
    private final UnsafeBuffer out = new UnsafeBuffer(ByteBuffer.allocateDirect(FRAME_BYTES));
    private final RequestHeaderEncoder header = new RequestHeaderEncoder();
    private final WriteTxnMarkersRequestEncoder request = new WriteTxnMarkersRequestEncoder();
    private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
    private final WriteTxnMarkersResponseDecoder response = new WriteTxnMarkersResponseDecoder();
    private final Thread thread;
    private int correlationId;
    private volatile boolean closed;

    /** Started at once; {@code wakeAgent} wakes the coordinators' agent when an answer is in. */
    public RemoteMarkers(final FetcherSettings settings, final int nodeId, final Runnable wakeAgent)
    {
        this.settings = settings;
        this.clientId = "ferrite-txn-markers-" + nodeId;
        this.wakeAgent = wakeAgent;
        this.thread = new Thread(this::run, clientId);
        thread.setDaemon(true);
        thread.start();
    }

    /** On the agent: sends a marker; its answer comes back through {@link #drain}. */
    public void send(final Send s)
    {
        sends.add(s);
    }

    /** On the agent: drops the queued markers {@code which} accepts (their runs were forgotten); they are never answered. */
    public void purge(final java.util.function.Predicate<Send> which)
    {
        sends.removeIf(which);
    }

    /** On the agent, at the start of each pass: applies the answers come back; returns how many. */
    public int drain()
    {
        int n = 0;
        for (Runnable answer; (answer = answers.poll()) != null; n++)
        {
            answer.run();
        }
        return n;
    }

    private void run()
    {
        try
        {
            sendAll();
        }
        finally
        {
            channels.values().forEach(FetcherChannel::close); // also one made after close() closed the others
        }
    }

    private void sendAll()
    {
        while (!closed)
        {
            final Send s;
            try
            {
                s = sends.poll(100, TimeUnit.MILLISECONDS);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
            if (s == null)
            {
                continue;
            }
            final short error = exchange(s);
            answers.add(() -> s.then().accept(error));
            wakeAgent.run();
        }
    }

    /** Sends the marker and reads the leader's error for its partition; REQUEST_TIMED_OUT when the connection failed. */
    private short exchange(final Send s)
    {
        final InetSocketAddress leader = new InetSocketAddress(s.to().host(), s.to().port());
        FetcherChannel channel = channels.get(leader);
        try
        {
            if (channel == null)
            {
                channel = new FetcherChannel(leader, settings, FRAME_BYTES);
                channels.put(leader, channel);
            }
            if (!channel.connected())
            {
                channel.connect();
            }
            channel.send(out.byteBuffer().clear().limit(encode(s)));
            final int length = channel.receive();
            final int body = responseHeader.wrap(channel.inBuffer, 0, length, ApiKeys.WRITE_TXN_MARKERS.responseHeaderVersion(VERSION));
            if (responseHeader.correlationId() != correlationId)
            {
                throw new IOException("an answer to request " + responseHeader.correlationId() + ", expected " + correlationId);
            }
            response.wrap(channel.inBuffer, body, length, VERSION);
            return errorOf(s);
        }
        catch (final IOException | RuntimeException ex)
        {
            if (channel != null)
            {
                channel.disconnect();
            }
            LOG.debug("the marker of producer {} to {} at node {} failed: {}", s.producerId(), s.tp(), s.to().nodeId(), ex.toString());
            return Errors.REQUEST_TIMED_OUT;
        }
    }

    private int encode(final Send s)
    {
        int at = FetcherChannel.SIZE_LENGTH;
        final ApiKeys api = ApiKeys.WRITE_TXN_MARKERS;
        at += header.wrap(out, at, api.requestHeaderVersion(VERSION)).requestApiKey(api.id).requestApiVersion(VERSION)
            .correlationId(++correlationId).clientId(clientId).finish();
        final WriteTxnMarkersRequestEncoder.WritableTxnMarker marker = request.wrap(out, at, VERSION).markers(1).next()
            .producerId(s.producerId()).producerEpoch(s.producerEpoch()).transactionResult(s.commit());
        marker.topics(1).next().name(s.tp().topic()).partitionIndexes(1).addInt32(s.tp().partition());
        marker.coordinatorEpoch(s.coordinatorEpoch()).transactionVersion((byte)s.transactionVersion()); // closes the topics
        at += request.finish();
        out.putInt(0, at - FetcherChannel.SIZE_LENGTH, ByteOrder.BIG_ENDIAN);
        return at;
    }

    /** The answer's error for the marker's partition (UNKNOWN_TOPIC_OR_PARTITION when the answer does not name it). */
    private short errorOf(final Send s)
    {
        final WriteTxnMarkersResponseDecoder.WritableTxnMarkerResult markers = response.markers();
        while (markers.hasNext())
        {
            markers.next();
            final WriteTxnMarkersResponseDecoder.WritableTxnMarkerTopicResult topics = markers.topics();
            while (topics.hasNext())
            {
                topics.next();
                final WriteTxnMarkersResponseDecoder.WritableTxnMarkerPartitionResult partitions = topics.partitions();
                while (partitions.hasNext())
                {
                    partitions.next();
                    if (s.tp().topic().equals(topics.name()) && partitions.partitionIndex() == s.tp().partition())
                    {
                        return partitions.errorCode();
                    }
                }
            }
        }
        return Errors.UNKNOWN_TOPIC_OR_PARTITION;
    }

    @Override
    public void close() throws InterruptedException
    {
        closed = true;
        thread.interrupt();
        channels.values().forEach(FetcherChannel::close); // ends a connect or a wait in progress
        thread.join(TimeUnit.SECONDS.toMillis(30));
    }
}
