package io.ferrite.perf.client;

import io.ferrite.broker.Broker;
import io.ferrite.client.OutgoingHeaders;
import io.ferrite.client.Producer;
import io.ferrite.client.ProducerConfig;
import io.ferrite.perf.broker.RequestPathBenchmark;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Ferrite client's send path against an in-process Ferrite over loopback: one op = one
 * {@code send} of a keyed 100 B record with one header (acks=1, linger 1 ms, 4 partitions) and one
 * duty cycle, at most {@link #WINDOW} records unacknowledged (the op runs duty cycles until the
 * window has room, so completions are part of the cost). {@code -prof gc}'s
 * {@code gc.alloc.rate.norm} counts every thread of the JVM, the broker's too: 0 B/op means neither
 * the client nor the broker allocates per record.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class ProducerSendBenchmark
{
    /** Records in flight at most: enough to fill batches, few enough that the batch pool stays warm. */
    private static final int WINDOW = 2_000;

    private Path dir;
    private Broker broker;
    private Producer producer;
    private final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
    private final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
    private final OutgoingHeaders headers = new OutgoingHeaders();
    private long sent;
    private long failed;

    @Setup(Level.Trial)
    public void setUp() throws Exception
    {
        dir = Files.createTempDirectory("ferrite-client-bench");
        broker = RequestPathBenchmark.startBroker(dir);
        broker.admin().createTopic("bench", 4, Map.of()).get(20, TimeUnit.SECONDS);
        producer = new Producer(new ProducerConfig().bootstrapServers("127.0.0.1:" + broker.address().getPort())
            .acks(1).lingerMs(1), (tag, topic, partition, offset, error) ->
        {
            if (error != 0)
            {
                failed++;
            }
        });
        if (producer.awaitPartitions("bench", 30_000) != 4)
        {
            throw new IllegalStateException("topic bench not known to the producer");
        }
        headers.add(new UnsafeBuffer("trace".getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0, 5, key, 0, 8);
    }

    @Benchmark
    public int send()
    {
        while (producer.pending() >= WINDOW)
        {
            producer.doWork();
        }
        key.putLong(0, sent++);
        final int partition = producer.send("bench", -1, key, 0, 8, value, 0, 100, headers, -1, sent);
        producer.doWork();
        return partition;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception
    {
        producer.flush();
        while (producer.pending() > 0)
        {
            producer.doWork();
        }
        producer.close();
        broker.close();
        if (failed > 0)
        {
            throw new IllegalStateException(failed + " sends failed");
        }
        try (var files = Files.walk(dir))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
