package io.ferrite.perf.broker;

import io.ferrite.broker.Broker;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
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
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.perf.broker.RequestPathBenchmark.connect;
import static io.ferrite.perf.broker.RequestPathBenchmark.exchange;
import static io.ferrite.perf.broker.RequestPathBenchmark.frame;
import static io.ferrite.perf.broker.RequestPathBenchmark.startBroker;
import static io.ferrite.perf.broker.RequestPathBenchmark.stop;
import static io.ferrite.perf.broker.RequestPathBenchmark.tenSmallRecords;

/**
 * One Fetch of {@code partitions} partitions round trip to an in-process broker over loopback, each
 * partition holding {@code batches} batches of 10 x 100 B records (about 1.2 KB each), read whole from offset 0: the
 * response's system calls grow with its partitions (2N+1 when every region is sent with
 * {@code transferTo}; one write when they are copied in beside their headers), the rest of its cost
 * little. Run with {@code -jvmArgsAppend -Dferrite.fetch.inline.record.bytes=0} for the splice-only path.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class FetchResponseBenchmark
{
    @Param({"1", "10", "100"})
    public int partitions;

    /** Batches of 10 x 100 B in each partition: the size of each region (about 1.2 KB a batch). */
    @Param({"1"})
    public int batches;

    private Path dir;
    private Broker broker;
    private SocketChannel channel;
    private ByteBuffer fetch;
    private final ByteBuffer size = ByteBuffer.allocateDirect(4);
    private final ByteBuffer response = ByteBuffer.allocateDirect(8 << 20);

    @Setup(Level.Trial)
    public void setUp() throws Exception
    {
        dir = Files.createTempDirectory("ferrite-fetch-bench");
        broker = startBroker(dir);
        broker.admin().createTopic("fetched", partitions, Map.of()).get(20, TimeUnit.SECONDS);
        channel = connect(broker);
        final MemoryRecords records = tenSmallRecords();
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        final List<ProduceRequestData.PartitionProduceData> produced = new ArrayList<>();
        final List<FetchRequestData.FetchPartition> fetched = new ArrayList<>();
        for (int p = 0; p < partitions; p++)
        {
            produced.add(new ProduceRequestData.PartitionProduceData().setIndex(p)
                .setRecords(MemoryRecords.readableRecords(records.buffer().duplicate())));
            fetched.add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
        }
        topics.add(new ProduceRequestData.TopicProduceData().setName("fetched").setPartitionData(produced));
        for (int b = 0; b < batches; b++)
        {
            exchange(channel, frame(ApiKeys.PRODUCE, (short)12, new ProduceRequestData().setAcks((short)1).setTimeoutMs(30_000)
                .setTopicData(topics)), size, response);
        }
        fetch = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0)
            .setMaxBytes(4 << 20).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("fetched")
                .setPartitions(fetched))));
        if (exchange(channel, fetch, size, response) < partitions * batches * records.sizeInBytes())
        {
            throw new IllegalStateException("the fetch does not return every partition's batch");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        channel.close();
        stop(broker, dir);
    }

    @Benchmark
    public int fetch() throws IOException
    {
        return exchange(channel, fetch, size, response);
    }
}
