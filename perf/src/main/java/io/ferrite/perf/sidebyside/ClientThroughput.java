package io.ferrite.perf.sidebyside;

import io.ferrite.client.Producer;
import io.ferrite.client.ProducerConfig;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The throughput row of {@link ClientLatency}: one producer, unpaced, {@code n} records of 1 KiB to a one-partition
 * topic, acks=1, no compression, batch.size 64 KiB, linger.ms 5, sent then flushed; records/s, MB/s, and the client's
 * CPU per MB: the CPU time of the runner's JVM (all its threads: the producer's, kafka-clients' I/O thread, GC, JIT) over
 * the run, from {@code OperatingSystemMXBean.getProcessCpuTime} as the default suite's "client CPU" (the broker's is
 * taken the same way from {@code /proc/<pid>/stat}). Nothing else runs in the runner meanwhile.
 */
final class ClientThroughput
{
    /** {records/s, MB/s, client CPU ms per MB, records failed}. */
    record Figures(double recordsPerSecond, double megabytesPerSecond, double cpuMsPerMb, long failed)
    {
    }

    private ClientThroughput()
    {
    }

    static Figures kafkaClients(final Workloads w, final String topic, final int n) throws InterruptedException
    {
        final long cpu = SideBySide.runnerCpuNanos();
        final double[] t = w.throughput(topic, "1", "none", n); // failures go to the run's problems
        return new Figures(t[0], t[1], (SideBySide.runnerCpuNanos() - cpu) / 1e6 / SideBySide.megabytes(n), 0);
    }

    /**
     * The Ferrite client on the caller's thread: sends until the batch pool is full ({@code BUFFER_FULL}), running the
     * duty cycle every 16 sends and whenever a send must wait (then idling with {@code idle} while it does nothing).
     */
    static Figures ferriteClient(final String bootstrap, final byte[] payload, final String topic, final int n,
        final IdleStrategy idle)
    {
        final long cpu = SideBySide.runnerCpuNanos();
        final long[] failed = new long[1];
        final UnsafeBuffer value = new UnsafeBuffer(ByteBuffer.allocateDirect(payload.length));
        value.putBytes(0, payload);
        final long start;
        final long end;
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap).acks(1).lingerMs(5)
            .batchSize(64 * 1024), (tag, t, partition, offset, error) -> failed[0] += error == 0 ? 0 : 1))
        {
            if (producer.awaitPartitions(topic, 60_000) < 1)
            {
                return new Figures(Double.NaN, Double.NaN, Double.NaN, n);
            }
            start = System.nanoTime();
            final long deadline = start + TimeUnit.SECONDS.toNanos(300);
            int i = 0;
            while (i < n && System.nanoTime() - deadline < 0)
            {
                final int r = producer.send(topic, 0, null, 0, -1, value, 0, payload.length, null, -1, i);
                if (r == Producer.BUFFER_FULL)
                {
                    idle.idle(producer.doWork());
                    continue;
                }
                idle.reset();
                failed[0] += r < 0 ? 1 : 0;
                if ((++i & 15) == 0)
                {
                    producer.doWork();
                }
            }
            failed[0] += n - i;
            producer.flush();
            while (producer.pending() > 0 && System.nanoTime() - deadline < 0)
            {
                idle.idle(producer.doWork());
            }
            end = System.nanoTime();
        } // close: a record still pending completes CLIENT_CLOSED, counted
        final double seconds = (end - start) / 1e9;
        return new Figures(n / seconds, SideBySide.megabytes(n) / seconds,
            (SideBySide.runnerCpuNanos() - cpu) / 1e6 / SideBySide.megabytes(n), failed[0]);
    }
}
