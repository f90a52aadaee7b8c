package io.ferrite.perf.sidebyside;

import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The transactional suite of the side-by-side runner ({@code --transactions}, issue 12), one round
 * against one broker: for each size in {@code --txn-sizes} a transactional producer writes
 * {@code --txn-records} records of 1 KiB in transactions of that many records (a tenth as many
 * first, unmeasured), each ended by {@code commitTransaction()} timed on its own; then the topic it
 * wrote is read from its start by one consumer with {@code read_committed} and one with
 * {@code read_uncommitted}, alternately, {@code --txn-reads} times each, after one read that warms
 * the consumer's code up and is not counted.
 */
final class TxnRound
{
    private final SideBySide sink;
    private final Kind kind;
    private final int round;
    private final BrokerProcess broker;
    private final Workloads w;
    private final SideBySideOptions options;
    /** The broker's own EndTxn times (null: the runner could not attach to the broker JVM, see {@link #run}). */
    private BrokerRequestTimes brokerTimes;

    TxnRound(final SideBySide sink, final Kind kind, final int round, final BrokerProcess broker, final Workloads w,
        final SideBySideOptions options)
    {
        this.sink = sink;
        this.kind = kind;
        this.round = round;
        this.broker = broker;
        this.w = w;
        this.options = options;
    }

    static String producerName(final int perTxn)
    {
        return "transactional producer, " + perTxn + " records per transaction";
    }

    static String pacedName(final int perTxn, final int rate)
    {
        return producerName(perTxn) + ", paced at " + rate + " transactions/s";
    }

    static String consumerName(final int perTxn, final String what)
    {
        return "consumer of the transactional log (" + perTxn + " per transaction), " + what;
    }

    void run() throws Exception
    {
        try
        {
            // attached, and the broker's management agent started, before any workload: neither is in a measurement
            brokerTimes = BrokerRequestTimes.attach(broker.process.pid());
        }
        catch (final IOException ex)
        {
            sink.problems().add(kind.label + " round " + round + ": no broker EndTxn times (" + ex + ")");
            System.out.println("PROBLEM: no broker EndTxn times: " + ex);
        }
        try
        {
            workloads();
        }
        finally
        {
            if (brokerTimes != null)
            {
                brokerTimes.close();
            }
        }
    }

    private void workloads() throws Exception
    {
        final List<String> topics = new ArrayList<>();
        for (final int size : options.txnSizes)
        {
            topics.add(topic(size));
        }
        if (options.txnPacedSize > 0)
        {
            topics.add("txn-paced-" + options.txnPacedSize);
        }
        w.createTopics(topics);
        final TxnWorkloads txn = new TxnWorkloads(w);
        final int[] written = new int[options.txnSizes.length];
        for (int s = 0; s < options.txnSizes.length; s++)
        {
            final int size = options.txnSizes[s];
            final int measured = Math.max(1, options.txnRecords / size);
            final int warmup = Math.max(1, measured / 10);
            written[s] = measure(txn, producerName(size), topic(size), "side-by-side-" + size, size, warmup, measured, 0).records();
        }
        if (options.txnPacedSize > 0)
        {
            paced(txn);
        }
        w.consume(topic(options.txnSizes[0]), written[0], "read_uncommitted"); // warm-up, not counted
        for (int s = 0; s < options.txnSizes.length; s++)
        {
            final int size = options.txnSizes[s];
            for (int read = 0; read < options.txnReads; read++)
            {
                // alternate which level reads first, so that neither always reads right after the other
                final boolean committedFirst = read % 2 == 0;
                final double first = w.consume(topic(size), written[s], committedFirst ? "read_committed" : "read_uncommitted")[0];
                final double second = w.consume(topic(size), written[s], committedFirst ? "read_uncommitted" : "read_committed")[0];
                final double committed = committedFirst ? first : second;
                final double uncommitted = committedFirst ? second : first;
                sink.add(kind, consumerName(size, "read_uncommitted"), "MB/s", true, uncommitted);
                sink.add(kind, consumerName(size, "read_committed"), "MB/s", true, committed);
                sink.add(kind, consumerName(size, "read_committed / read_uncommitted"), "ratio of MB/s, same round", true,
                    committed / uncommitted);
                System.out.printf(Locale.ROOT, "%s: read_committed %.1f MB/s, read_uncommitted %.1f MB/s (%.3f)%n",
                    consumerName(size, "read " + (read + 1)), committed, uncommitted, committed / uncommitted);
            }
        }
    }

    /**
     * The paced run: transactions of {@code --txn-paced-size} records begun {@code --txn-paced-rate} times a
     * second for {@code --txn-paced-seconds}, after a tenth as many unmeasured: both brokers get the same
     * offered load, below either one's saturation, so the commit latency compares the brokers, not how hard
     * each one's own throughput drives the shared cores (the unpaced runs' clients send as fast as each
     * broker takes it).
     */
    private void paced(final TxnWorkloads txn) throws InterruptedException
    {
        final int size = options.txnPacedSize;
        final int rate = options.txnPacedRate;
        final int measured = Math.max(1, (int) Math.round(rate * options.txnPacedSeconds));
        measure(txn, pacedName(size, rate), "txn-paced-" + size, "side-by-side-paced", size, Math.max(1, measured / 10), measured,
            1_000_000_000L / rate);
    }

    /** One transactional producer run (see {@link TxnWorkloads#transactional}), its rows recorded under {@code name}. */
    private TxnWorkloads.Run measure(final TxnWorkloads txn, final String name, final String topic, final String transactionalId,
        final int size, final int warmup, final int measured, final long intervalNanos) throws InterruptedException
    {
        final BrokerRequestTimes.Reading[] endTxnBefore = new BrokerRequestTimes.Reading[1];
        final long cpuBefore = broker.cpuNanos();
        final Probe probe = Probe.start(broker);
        final TxnWorkloads.Run r = txn.transactional(topic, transactionalId, size, warmup, measured, intervalNanos,
            () -> endTxnBefore[0] = endTxn()); // after the warm-up: the broker's mean is over the measured commits only
        sink.context(kind, round, name, probe.stop());
        final BrokerRequestTimes.Reading endTxnAfter = endTxn();
        final double cpuMsPerMb = (broker.cpuNanos() - cpuBefore) / 1e6 / SideBySide.megabytes(r.records());
        sink.add(kind, name, "records/s", true, r.recordsPerSecond());
        sink.add(kind, name, "MB/s", true, r.megabytesPerSecond());
        final Histogram c = r.commitMicros();
        sink.add(kind, name, "commit p50 us", false, c.getValueAtPercentile(50));
        sink.add(kind, name, "commit p99 us", false, c.getValueAtPercentile(99));
        sink.add(kind, name, "commit p99.9 us", false, c.getValueAtPercentile(99.9));
        sink.add(kind, name, "commit max us", false, c.getMaxValue());
        sink.add(kind, name, "commit mean us", false, c.getMean());
        final BrokerRequestTimes.Reading before = endTxnBefore[0];
        if (endTxnAfter != null && before != null)
        {
            // the mean is exact over the measured transactions; the percentiles are the broker's recent window
            sink.add(kind, name, "broker EndTxn mean us", false, endTxnAfter.meanSinceMs(before) * 1000);
            sink.add(kind, name, "broker EndTxn p50 us, recent", false, endTxnAfter.p50Ms() * 1000);
            sink.add(kind, name, "broker EndTxn p99 us, recent", false, endTxnAfter.p99Ms() * 1000);
            System.out.printf(Locale.ROOT, "  broker EndTxn (TotalTimeMs): %d requests, mean %.0f us (client commit mean %.0f us); "
                    + "recent p50 %.0f p99 %.0f p99.9 %.0f us%n", endTxnAfter.count() - before.count(),
                endTxnAfter.meanSinceMs(before) * 1000, c.getMean(), endTxnAfter.p50Ms() * 1000, endTxnAfter.p99Ms() * 1000,
                endTxnAfter.p999Ms() * 1000);
        }
        final Histogram f = r.flushMicros();
        sink.add(kind, name, "flush before the commit p50 us", false, f.getValueAtPercentile(50));
        sink.add(kind, name, "flush before the commit p99 us", false, f.getValueAtPercentile(99));
        sink.add(kind, name, "broker CPU ms per MB", false, cpuMsPerMb);
        System.out.printf(Locale.ROOT, "%s: %.0f records/s, %.1f MB/s, %d transactions; commit p50 %d p99 %d p99.9 %d max %d us; "
                + "flush p50 %d p99 %d us; broker CPU %.2f ms/MB; load %s%n", name, r.recordsPerSecond(), r.megabytesPerSecond(),
            r.transactions(), c.getValueAtPercentile(50), c.getValueAtPercentile(99), c.getValueAtPercentile(99.9), c.getMaxValue(),
            f.getValueAtPercentile(50), f.getValueAtPercentile(99), cpuMsPerMb, Machine.loadAverages());
        return r;
    }

    /** The broker's EndTxn TotalTimeMs now, or null when it cannot be read (said once as a problem). */
    private BrokerRequestTimes.Reading endTxn()
    {
        if (brokerTimes == null)
        {
            return null;
        }
        try
        {
            return brokerTimes.totalTime("EndTxn");
        }
        catch (final IOException ex)
        {
            sink.problems().add(kind.label + " round " + round + ": broker EndTxn times unreadable (" + ex + ")");
            brokerTimes = null;
            return null;
        }
    }

    private static String topic(final int perTxn)
    {
        return "txn-" + perTxn;
    }

    /** What the JSON says of the suite's settings (SideBySide writes the rest). */
    static List<String> settings(final SideBySideOptions o)
    {
        return List.of(
            "transactional producer: kafka-clients 4.4 KafkaProducer with transactional.id (so idempotent, acks=all), "
                + "batch.size=65536, linger.ms=5, no compression; one topic per setting; for each of " + sizes(o) + " records "
                + "per transaction, " + o.txnRecords + " records measured after a tenth as many unmeasured (initTransactions "
                + "first, also unmeasured); each transaction: beginTransaction(), N x send() with a callback, flush(), "
                + "commitTransaction(); records/s from the first measured beginTransaction() to the last commit's return",
            "commit latency: each commitTransaction() from its call to its return (HdrHistogram, us), after the flush() that "
                + "leaves it nothing to send, so it is the transaction's end alone (EndTxn, and whatever the broker makes it "
                + "wait for); the flush's latency beside it (the produce of the transaction's last batches)",
            "broker EndTxn: the broker's own time for EndTxn, its MBean kafka.network:type=RequestMetrics,name=TotalTimeMs,"
                + "request=EndTxn (from the request's arrival to its answer written to the socket), read over JMX (the runner "
                + "attaches to the broker JVM) after each producer workload's warm-up and after the workload; the mean is over "
                + "the measured transactions' EndTxns exactly (count and mean are since the start in both brokers), the p50 and "
                + "p99 are what the MBean says right after the workload, over the broker's recent requests (Kafka 4.4: a "
                + "reservoir biased to about the last 5 minutes, each time rounded to whole ms; Ferrite: the current and "
                + "previous minute, in us), so they include the warm-up's and, after the first workload, the earlier "
                + "workloads' EndTxns; compare the means with the client's commit mean",
            "consumers of the transactional log: one consumer (assign, default fetch sizes) reading each topic the "
                + "transactional producer wrote, from offset 0 to its last committed record, with isolation.level "
                + "read_committed and read_uncommitted alternately, " + o.txnReads + " time(s) each per round, after one "
                + "uncounted read_uncommitted read that warms the consumer up; the ratio read_committed / read_uncommitted "
                + "is taken within each pair of reads, and these rows' medians and ranges are over every read of every round",
            "paced transactional producer: the same producer, transactions of " + o.txnPacedSize + " records begun on a fixed "
                + "schedule, " + o.txnPacedRate + " a second for " + o.txnPacedSeconds + " s (after a tenth as many unmeasured), "
                + "so both brokers get the same offered load, below either one's saturation: its commit latency compares the "
                + "brokers at equal work, where the unpaced rows' clients run as fast as each broker lets them (Ferrite's "
                + "several times faster, on the same 2 cores)");
    }

    private static String sizes(final SideBySideOptions o)
    {
        final List<String> s = new ArrayList<>();
        for (final int size : o.txnSizes)
        {
            s.add(Integer.toString(size));
        }
        return String.join(" and ", s);
    }
}
