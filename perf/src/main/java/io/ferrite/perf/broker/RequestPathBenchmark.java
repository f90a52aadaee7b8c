package io.ferrite.perf.broker;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The broker's request paths end to end over loopback, one request in flight: a Produce (acks=1,
 * one batch of 10 x 100 B records) through decode, routing to the log thread, append and response;
 * and a Fetch of up to 16 KiB from the start of the log, whose records are copied into the response beside its
 * headers (a region under {@code ferrite.fetch.inline.record.bytes}, 32 KiB; before issue 17 they went out with
 * {@code transferTo}, as the fetch figures recorded in jmh-results/RESULTS.md did). The client side reuses direct buffers and allocates nothing, so {@code -prof gc}'s
 * {@code gc.alloc.rate.norm} (all threads) is what the broker's threads allocate per request.
 * {@code waitingFetches} other connections each hold a fetch waiting (for an hour) on the 10
 * partitions of another topic, on the same network thread: what idle consumers cost the requests
 * that do work. {@code recording} is the broker's {@code ferrite.metrics.recording}: {@code true} (the default: request
 * counts, bytes, request times recorded on the network thread) or {@code false} (nothing recorded per request), so one
 * jar measures the path with the metrics on and off ({@link RecordingAB} runs them alternately).
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class RequestPathBenchmark
{
    @Param({"0", "100"})
    public int waitingFetches;

    @Param({"true", "false"})
    public boolean recording;

    private Path dir;
    private Broker broker;
    private final java.util.List<SocketChannel> waiting = new java.util.ArrayList<>();
    private SocketChannel channel;
    private ByteBuffer produce;
    private ByteBuffer fetch;
    private final ByteBuffer size = ByteBuffer.allocateDirect(4);
    private final ByteBuffer response = ByteBuffer.allocateDirect(1 << 20);

    @Setup(Level.Trial)
    public void setUp() throws Exception
    {
        dir = Files.createTempDirectory("ferrite-request-bench");
        broker = startBroker(dir, recording);
        broker.admin().createTopic("bench", 1, Map.of()).get(20, java.util.concurrent.TimeUnit.SECONDS); // the registry's writer
        channel = connect(broker);

        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName("bench").setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(tenSmallRecords()))));
        produce = frame(ApiKeys.PRODUCE, (short)12, new ProduceRequestData().setAcks((short)1).setTimeoutMs(30_000)
            .setTopicData(topics));
        fetch = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0)
            .setMaxBytes(16 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("bench")
                .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                    .setPartitionMaxBytes(16 * 1024))))));
        for (int i = 0; i < 100; i++)
        {
            produce(); // something to fetch
        }
        broker.admin().createTopic("idle", 10, Map.of()).get(20, java.util.concurrent.TimeUnit.SECONDS);
        final List<FetchRequestData.FetchPartition> idle = new java.util.ArrayList<>();
        for (int p = 0; p < 10; p++)
        {
            idle.add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0).setPartitionMaxBytes(16 * 1024));
        }
        final ByteBuffer wait = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(3_600_000)
            .setMinBytes(1).setMaxBytes(16 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                .setTopic("idle").setPartitions(idle))));
        for (int i = 0; i < waitingFetches; i++)
        {
            final SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", broker.address().getPort()));
            waiting.add(c);
            wait.clear();
            while (wait.hasRemaining())
            {
                c.write(wait);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        channel.close();
        for (final SocketChannel c : waiting)
        {
            c.close();
        }
        stop(broker, dir);
    }

    /** A broker on an ephemeral loopback port, one network thread and one log thread, its data in {@code dir}. */
    public static Broker startBroker(final Path dir) throws IOException
    {
        return startBroker(dir, true);
    }

    /** As {@link #startBroker(Path)}, with {@code ferrite.metrics.recording} on or off. */
    static Broker startBroker(final Path dir, final boolean recording) throws IOException
    {
        // -Dferrite.fetch.inline.record.bytes=N (e.g. in -jvmArgsAppend) sets the broker's setting: A/B runs of one jar
        return Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.NUM_NETWORK_THREADS, "1", BrokerConfig.LOG_THREADS, "1",
            BrokerConfig.FETCH_INLINE_RECORD_BYTES, System.getProperty(BrokerConfig.FETCH_INLINE_RECORD_BYTES, "32768"),
            BrokerConfig.METRICS_RECORDING, Boolean.toString(recording))));
    }

    /** A blocking client connection to {@code broker}, without Nagle's delay. */
    static SocketChannel connect(final Broker broker) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", broker.address().getPort()));
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        return channel;
    }

    /** One uncompressed batch of 10 records of 100 B (about 1.2 KB). */
    static MemoryRecords tenSmallRecords()
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < 10; i++)
        {
            builder.append(System.currentTimeMillis(), null, new byte[100]);
        }
        return builder.build();
    }

    /** Closes the broker and deletes its data. */
    static void stop(final Broker broker, final Path dir) throws IOException
    {
        broker.close();
        try (Stream<Path> files = Files.walk(dir))
        {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    public int produce() throws IOException
    {
        return exchange(produce);
    }

    @Benchmark
    public int fetch() throws IOException
    {
        return exchange(fetch);
    }

    private int exchange(final ByteBuffer request) throws IOException
    {
        return exchange(channel, request, size, response);
    }

    /** One request written and its response read whole, into reused buffers; the response's size. */
    static int exchange(final SocketChannel channel, final ByteBuffer request, final ByteBuffer size, final ByteBuffer response)
        throws IOException
    {
        request.clear();
        while (request.hasRemaining())
        {
            channel.write(request);
        }
        size.clear();
        while (size.hasRemaining())
        {
            if (channel.read(size) < 0)
            {
                throw new IOException("broker closed the connection");
            }
        }
        final int length = size.getInt(0);
        response.clear().limit(length);
        while (response.hasRemaining())
        {
            if (channel.read(response) < 0)
            {
                throw new IOException("broker closed the connection");
            }
        }
        return length;
    }

    static ByteBuffer frame(final ApiKeys api, final short version, final ApiMessage data)
    {
        final RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
            .setCorrelationId(1).setClientId("bench");
        final short headerVersion = api.requestHeaderVersion(version);
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final int length = header.size(cache, headerVersion) + data.size(cache, version);
        final ByteBuffer heap = ByteBuffer.allocate(4 + length).putInt(length);
        header.write(new ByteBufferAccessor(heap), cache, headerVersion);
        data.write(new ByteBufferAccessor(heap), cache, version);
        final ByteBuffer direct = ByteBuffer.allocateDirect(heap.capacity());
        direct.put(heap.flip());
        return direct;
    }
}
