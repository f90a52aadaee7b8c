package io.ferrite.perf.client;

import io.ferrite.broker.Broker;
import io.ferrite.client.Consumer;
import io.ferrite.client.ConsumerConfig;
import io.ferrite.client.OutgoingHeaders;
import io.ferrite.client.Producer;
import io.ferrite.client.ProducerConfig;
import io.ferrite.client.RebalanceListener;
import io.ferrite.client.RecordHandler;
import io.ferrite.perf.broker.RequestPathBenchmark;
import io.ferrite.wire.record.Record;
import org.agrona.concurrent.UnsafeBuffer;
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

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Ferrite client's poll path against an in-process Ferrite over loopback: one op = one record handed to the
 * {@link RecordHandler} (keyed 100 B value with one header, read in place: key, value's first long, the header), with
 * the duty cycles it takes (Fetch requests of {@code max.partition.fetch.bytes} 64 KiB, answers copied and parsed).
 * {@link #RECORDS} records are written once at set-up; a partition read to its end is sought back to 0 (a local seek,
 * no request), so the stream never runs dry. {@code mode}: {@code assign} (no group), or {@code subscribe} (a group
 * member: a Heartbeat every 100 ms and an auto-commit of the positions every 200 ms in the measured time too).
 * {@code -prof gc}'s {@code gc.alloc.rate.norm} counts every thread of the JVM, the broker's too.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class ConsumerPollBenchmark
{
    private static final int PARTITIONS = 2;
    private static final int RECORDS = 200_000;
    private static final String TOPIC = "bench";

    @Param({"assign", "subscribe"})
    public String mode;

    private Path dir;
    private Broker broker;
    private Consumer consumer;
    private final long[] end = new long[PARTITIONS];
    private final RecordHandler handler = this::onRecord;
    private long checksum;

    @Setup(Level.Trial)
    public void setUp() throws Exception
    {
        dir = Files.createTempDirectory("ferrite-client-poll-bench");
        broker = RequestPathBenchmark.startBroker(dir);
        broker.admin().createTopic(TOPIC, PARTITIONS, Map.of()).get(20, TimeUnit.SECONDS);
        final String bootstrap = "127.0.0.1:" + broker.address().getPort();
        produce(bootstrap);
        final ConsumerConfig config = new ConsumerConfig().bootstrapServers(bootstrap)
            .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPartitionFetchBytes(64 * 1024)
            .fetchMaxWaitMs(10); // a Fetch in flight for a partition at its end, when it is sought back, waits only 10 ms
        final int[] assigned = new int[1];
        if ("subscribe".equals(mode))
        {
            consumer = new Consumer(config.groupId("bench-group").heartbeatIntervalMs(100).autoCommitIntervalMs(200));
            consumer.subscribe(List.of(TOPIC), new RebalanceListener()
            {
                @Override
                public void onAssigned(final String topic, final int partition)
                {
                    assigned[0]++;
                }

                @Override
                public void onRevoked(final String topic, final int partition)
                {
                    assigned[0]--;
                }
            });
        }
        else
        {
            consumer = new Consumer(config);
            for (int p = 0; p < PARTITIONS; p++)
            {
                consumer.assign(TOPIC, p);
                assigned[0]++;
            }
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (assigned[0] < PARTITIONS)
        {
            consumer.doWork();
            consumer.poll(handler, 0);
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("the consumer was not given the partitions in time");
            }
        }
    }

    @Benchmark
    public long poll()
    {
        for (int p = 0; p < PARTITIONS; p++)
        {
            if (consumer.position(TOPIC, p) >= end[p])
            {
                consumer.seek(TOPIC, p, 0);
            }
        }
        while (consumer.poll(handler, 1) == 0)
        {
            consumer.doWork();
        }
        return checksum;
    }

    private void onRecord(final String topic, final int partition, final Record record)
    {
        checksum += record.buffer().getLong(record.keyOffset()) + record.buffer().getLong(record.valueOffset());
        while (record.nextHeader())
        {
            checksum += record.headerValueLength();
        }
    }

    /** {@link #RECORDS} keyed records, half to each partition; {@link #end} takes each partition's end offset. */
    private void produce(final String bootstrap)
    {
        final long[] failed = new long[1];
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap).acks(1).lingerMs(1),
            (tag, t, partition, offset, error) ->
            {
                if (error != 0)
                {
                    failed[0]++;
                }
                else
                {
                    end[partition] = Math.max(end[partition], offset + 1);
                }
            }))
        {
            if (producer.awaitPartitions(TOPIC, 30_000) != PARTITIONS)
            {
                throw new IllegalStateException("topic " + TOPIC + " not known to the producer");
            }
            final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            final OutgoingHeaders headers = new OutgoingHeaders()
                .add(new UnsafeBuffer("trace".getBytes(StandardCharsets.UTF_8)), 0, 5, key, 0, 8);
            for (int i = 0; i < RECORDS; i++)
            {
                key.putLong(0, i);
                while (producer.send(TOPIC, i % PARTITIONS, key, 0, 8, value, 0, 100, headers, -1, i) == Producer.BUFFER_FULL)
                {
                    producer.doWork();
                }
                if (producer.pending() > 5_000)
                {
                    producer.doWork();
                }
            }
            producer.flush();
            while (producer.pending() > 0)
            {
                producer.doWork();
            }
        }
        if (failed[0] > 0)
        {
            throw new IllegalStateException(failed[0] + " sends failed");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception
    {
        consumer.close();
        broker.close();
        try (var files = Files.walk(dir))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
