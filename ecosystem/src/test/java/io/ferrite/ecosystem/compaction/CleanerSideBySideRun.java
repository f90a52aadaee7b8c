package io.ferrite.ecosystem.compaction;

import io.ferrite.testing.BrokerNode;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cleaner side by side with Apache Kafka 4.4's, on the same machine, one broker at a time, the same
 * data and settings (one cleaner thread, {@code log.cleaner.backoff.ms} 100, the default dedupe
 * buffer): a compacted partition of 20 000 keys updated 10 times (200-byte values, ~48 MB in 4 MiB
 * segments) is written while {@code min.compaction.lag.ms} holds the cleaner off; then the lag is set
 * to 0 and the time until the {@code cleaner-offset-checkpoint} reaches the active segment gives the
 * cleaner's throughput as an operator sees it (MB of dirty log cleaned per second, the log's bytes below the active
 * segment before the clean): "seconds" and "mbPerSecond", from just before the release to the first 10 ms poll that
 * finds the checkpoint. That window also holds the config's way to the log, the wait for the cleaner's next duty cycle
 * ({@code log.cleaner.backoff.ms}, 0-100 ms) and up to 10 ms of the poll, the same for both brokers but twice as
 * heavy in the shorter clean; so the clean itself is timed too, the same way for both ({@link CleanTimes}): from the
 * broker's own log line where its cleaner begins the log to the checkpoint file's mtime ("cleanSeconds",
 * "cleanMbPerSecond"), with the cleaner thread's CPU and run-queue wait over the window and, for Ferrite, its
 * {@code CleanerTiming} stages ({@code -Dferrite.cleaner.perf.stages=false} turns that diagnostic off).
 * Meanwhile a probe producer sends 1 000 records/s to another topic (acks=1, one
 * record a batch): its send-to-ack latency is reported before and while the cleaner works.
 * A measurement, not a test of a figure: enabled by {@code -Dferrite.cleaner.perf=true}; writes
 * {@code jmh-results/side-by-side-compaction.json} when {@code -Dferrite.cleaner.perf.out} names it.
 * For investigations: {@code -Dferrite.cleaner.perf.brokers} (which brokers, in order, with configs of their own),
 * {@code .keys} and {@code .rounds} (a longer clean), {@code .trace} (each probe's send time and latency, to a file
 * per broker) and {@code -Dferrite.broker.jvmArgs} ({@link BrokerNode}: a JFR recording of the broker, say).
 */
@EnabledIfSystemProperty(named = "ferrite.cleaner.perf", matches = "true", disabledReason = "a measurement: -Dferrite.cleaner.perf=true")
class CleanerSideBySideRun
{
    private static final String TOPIC = "dirty";
    private static final int KEYS = Integer.getInteger("ferrite.cleaner.perf.keys", 20_000);
    private static final int ROUNDS = Integer.getInteger("ferrite.cleaner.perf.rounds", 10);
    private static final int VALUE_BYTES = 200;
    private static final int PROBE_RATE = 1_000;
    private static final long PROBE_IDLE_MS = 10_000;

    @TempDir
    Path dir;

    @Test
    void cleanerThroughputAndProduceLatency() throws Exception
    {
        final Map<String, String> brokerConfig = Map.of("log.cleaner.backoff.ms", "100", "log.cleaner.threads", "1");
        final List<String> json = new ArrayList<>();
        // -Dferrite.cleaner.perf.brokers: which brokers, in order, each with configs of its own after a ':'
        // (e.g. "kafka,ferrite,ferrite:ferrite.idle.strategy=park;log.cleaner.threads=1"); named by kind, or <kind>-<n>
        // for the n-th (from 0) when a kind comes more than once
        final String[] which = System.getProperty("ferrite.cleaner.perf.brokers", "kafka,ferrite").split(",");
        final boolean numbered = java.util.Arrays.stream(which).map(w -> w.split(":")[0].strip()).distinct().count() < which.length;
        for (int i = 0; i < which.length; i++)
        {
            final String[] kindAndConfig = which[i].strip().split(":", 2);
            final BrokerNode.Kind kind = BrokerNode.Kind.valueOf(kindAndConfig[0].toUpperCase());
            final Map<String, String> config = new HashMap<>(brokerConfig);
            if (kindAndConfig.length > 1)
            {
                for (final String kv : kindAndConfig[1].split(";"))
                {
                    config.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
                }
            }
            final String name = numbered ? kind.name().toLowerCase() + "-" + i : kind.name().toLowerCase();
            try (BrokerNode broker = BrokerNode.spawn(kind, name, dir.resolve(name), config, CleanTimes.JVM_ARGS))
            {
                broker.awaitReady();
                json.add(measure(broker));
            }
        }
        final String out = System.getProperty("ferrite.cleaner.perf.out");
        if (out != null)
        {
            Files.writeString(Path.of(out), "{\n  \"jdk\": \"" + System.getProperty("java.version") + "\",\n  \"cores\": "
                + Runtime.getRuntime().availableProcessors() + ",\n  \"runs\": [\n" + String.join(",\n", json) + "\n  ]\n}\n",
                StandardCharsets.UTF_8);
        }
    }

    private static String measure(final BrokerNode broker) throws Exception
    {
        try (Admin admin = Admin.create(broker.clientConfig()))
        {
            admin.createTopics(List.of(
                new NewTopic(TOPIC, 1, (short) 1).configs(Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(4 << 20),
                    "min.compaction.lag.ms", Long.toString(TimeUnit.DAYS.toMillis(1)))),
                new NewTopic("probe", 1, (short) 1))).all().get();
            writeDirty(broker);
            final Path partitionDir = broker.partitionDir(TOPIC, 0);
            final long activeBase = CleanerProgress.activeSegmentBase(partitionDir);
            final long dirtyBytes = CleanerProgress.bytesBelowActive(partitionDir);
            try (Probe probe = new Probe(broker))
            {
                final Histogram idle = probe.record(PROBE_IDLE_MS);
                final CleanTimes.ThreadTimes cleanerBefore = CleanTimes.cleanerThread(broker);
                final String loadBefore = CleanTimes.loadAverage();
                final long started = System.nanoTime();
                final long startedWallUs = wallMicros();
                probe.startRecording();
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, TOPIC),
                    List.of(new AlterConfigOp(new ConfigEntry("min.compaction.lag.ms", "0"), AlterConfigOp.OpType.SET)))).all().get();
                final long alteredWallUs = wallMicros();
                final Path checkpoint = partitionDir.getParent().resolve("cleaner-offset-checkpoint");
                while (CleanerProgress.checkpointed(checkpoint, TOPIC, 0) < activeBase)
                {
                    assertTrue(System.nanoTime() - started < TimeUnit.MINUTES.toNanos(10), broker.name + ": no clean within 10 minutes");
                    Thread.sleep(10);
                }
                final double seconds = (System.nanoTime() - started) / 1e9;
                final long seenWallUs = wallMicros();
                final CleanTimes.ThreadTimes cleanerAfter = CleanTimes.cleanerThread(broker);
                final Histogram cleaning = probe.stopRecording();
                probe.writeTrace(broker.name, startedWallUs, seenWallUs);
                final long after = CleanerProgress.bytesBelowActive(partitionDir);
                final double mbPerSecond = dirtyBytes / 1e6 / seconds;
                final CleanTimes times = CleanTimes.read(broker, TOPIC + "-0", checkpoint, startedWallUs, alteredWallUs, seenWallUs,
                    cleanerBefore, cleanerAfter);
                System.out.printf("%s: cleaned %.1f MB -> %.1f MB below offset %d in %.2f s: %.1f MB/s; probe p50/p99/max us idle %d/%d/%d (%d), "
                        + "while cleaning %d/%d/%d (%d); load %s -> %s%n", broker.name, dirtyBytes / 1e6, after / 1e6, activeBase, seconds,
                    mbPerSecond, idle.getValueAtPercentile(50) / 1000, idle.getValueAtPercentile(99) / 1000, idle.getMaxValue() / 1000,
                    idle.getTotalCount(), cleaning.getValueAtPercentile(50) / 1000, cleaning.getValueAtPercentile(99) / 1000,
                    cleaning.getMaxValue() / 1000, cleaning.getTotalCount(), loadBefore, CleanTimes.loadAverage());
                System.out.println(times.describe(broker.name, dirtyBytes));
                return String.format("    {\"broker\": \"%s\", \"dirtyBytes\": %d, \"bytesAfter\": %d, \"seconds\": %.3f, \"mbPerSecond\": %.2f, "
                        + "\"probeIdleP50us\": %d, \"probeIdleP99us\": %d, \"probeCleaningP50us\": %d, \"probeCleaningP99us\": %d, \"probeCleaningCount\": %d, "
                        + "\"loadBefore\": \"%s\", %s}",
                    broker.name, dirtyBytes, after, seconds, mbPerSecond, idle.getValueAtPercentile(50) / 1000, idle.getValueAtPercentile(99) / 1000,
                    cleaning.getValueAtPercentile(50) / 1000, cleaning.getValueAtPercentile(99) / 1000, cleaning.getTotalCount(), loadBefore,
                    times.json(dirtyBytes));
            }
        }
    }

    private static long wallMicros()
    {
        final java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** 20 000 keys x 10 rounds, each round in a new random order, the values random. */
    private static void writeDirty(final BrokerNode broker) throws Exception
    {
        final Map<String, Object> config = new HashMap<>(broker.clientConfig());
        config.put(ProducerConfig.ACKS_CONFIG, "1");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.put(ProducerConfig.BATCH_SIZE_CONFIG, 65_536);
        final Random random = new Random(42);
        final byte[] value = new byte[VALUE_BYTES];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer()))
        {
            final int[] order = new int[KEYS];
            for (int i = 0; i < KEYS; i++)
            {
                order[i] = i;
            }
            for (int round = 0; round < ROUNDS; round++)
            {
                for (int i = KEYS - 1; i > 0; i--)
                {
                    final int j = random.nextInt(i + 1);
                    final int t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
                for (final int key : order)
                {
                    random.nextBytes(value);
                    producer.send(new ProducerRecord<>(TOPIC, 0, String.format("key-%08d", key).getBytes(StandardCharsets.UTF_8), value.clone()));
                }
            }
            producer.flush();
        }
    }

    /** A producer sending 1 000 records a second to "probe" on its own thread, each record's send-to-ack time recorded. */
    private static final class Probe implements AutoCloseable
    {
        private final KafkaProducer<byte[], byte[]> producer;
        private final Thread sender;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private volatile Histogram recording = new Histogram(3);
        /** -Dferrite.cleaner.perf.trace=<dir>: every probe's send time (wall clock, us) and latency (us), to a file per broker. */
        private final String traceDir = System.getProperty("ferrite.cleaner.perf.trace");
        private final long[] trace = new long[traceDir == null ? 0 : 2 * 1_000_000];
        private int traced;

        Probe(final BrokerNode broker)
        {
            final Map<String, Object> config = new HashMap<>(broker.clientConfig());
            config.put(ProducerConfig.ACKS_CONFIG, "1");
            config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
            sender = new Thread(this::send, "probe");
            sender.start();
        }

        private void send()
        {
            final byte[] value = new byte[100];
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / PROBE_RATE;
            long next = System.nanoTime();
            while (running.get())
            {
                final long sent = System.nanoTime();
                final long sentWallUs = traceDir == null ? 0 : wallMicros();
                final Histogram into = recording;
                producer.send(new ProducerRecord<>("probe", 0, null, value), (metadata, error) ->
                {
                    if (error == null)
                    {
                        final long latency = System.nanoTime() - sent;
                        synchronized (into)
                        {
                            into.recordValue(latency);
                        }
                        synchronized (trace)
                        {
                            if (traced < trace.length)
                            {
                                trace[traced++] = sentWallUs;
                                trace[traced++] = latency / 1_000;
                            }
                        }
                    }
                });
                next += intervalNs;
                final long wait = next - System.nanoTime();
                if (wait > 0)
                {
                    java.util.concurrent.locks.LockSupport.parkNanos(wait);
                }
            }
        }

        /** Records for {@code millis} and answers what was recorded. */
        Histogram record(final long millis) throws InterruptedException
        {
            startRecording();
            Thread.sleep(millis);
            return stopRecording();
        }

        /** The trace to {@code <dir>/<broker>-probe.csv}, with the cleaning window's start and end first. */
        void writeTrace(final String broker, final long fromUs, final long toUs) throws java.io.IOException
        {
            if (traceDir == null)
            {
                return;
            }
            final StringBuilder out = new StringBuilder("# cleaning " + fromUs + " " + toUs + "\n");
            synchronized (trace)
            {
                for (int i = 0; i < traced; i += 2)
                {
                    out.append(trace[i]).append(',').append(trace[i + 1]).append('\n');
                }
            }
            Files.writeString(Path.of(traceDir, broker + "-probe.csv"), out.toString(), StandardCharsets.UTF_8);
        }

        void startRecording()
        {
            recording = new Histogram(3);
        }

        Histogram stopRecording()
        {
            final Histogram done = recording;
            recording = new Histogram(3);
            synchronized (done)
            {
                return done.copy();
            }
        }

        @Override
        public void close() throws InterruptedException
        {
            running.set(false);
            sender.join();
            producer.close();
        }
    }
}
