package io.ferrite.perf.sidebyside;

import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.HdrHistogram.Histogram;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The secured suite of the side-by-side runner ({@code --security ssl,sasl_ssl}, issue 18): both brokers started with
 * an SSL and a SASL_SSL listener beside their PLAINTEXT one, configured alike ({@link BrokerSecurity}: one key store,
 * the same TLS version and cipher suites, SCRAM-SHA-512), and over each protocol asked for, clients configured as for a
 * secured Kafka 4.4: producer throughput at acks=1 and acks=all, consumer throughput, the send-to-ack latency at a
 * fixed rate and per-record {@code send().get()}, with the broker's CPU per MB beside the throughputs. The protocols'
 * order alternates by round (the first one measured also warms the broker's TLS code up). Each row's name starts with
 * its protocol ({@link #name}); {@link SideBySideTargets} gives them the goals.
 */
final class TlsSuite
{
    private final SideBySideOptions options;
    final BrokerSecurity security;
    /** What the handshakes with each broker's listeners negotiated, over the rounds: "SSL TLSv1.3 TLS_AES_...". */
    private final Map<Kind, Set<String>> sessions = new EnumMap<>(Kind.class);

    private TlsSuite(final SideBySideOptions options, final BrokerSecurity security)
    {
        this.options = options;
        this.security = security;
    }

    /** The suite of {@code options}, its key store made (keytool) in a temporary directory; {@link #close} deletes it. */
    static TlsSuite make(final SideBySideOptions options) throws Exception
    {
        return new TlsSuite(options, BrokerSecurity.make(Files.createTempDirectory("side-by-side-tls"), options.tlsProtocol,
            options.cipherSuites));
    }

    /** A row's name: the protocol, then the measure ("SSL producer throughput acks=1"). */
    static String name(final String protocol, final String measure)
    {
        return protocol + " " + measure;
    }

    /** The measure of a row of this suite without its protocol ("producer throughput acks=1"), or null for another row. */
    static String measure(final String name)
    {
        for (final String protocol : BrokerSecurity.PROTOCOLS)
        {
            if (name.startsWith(protocol + " "))
            {
                return name.substring(protocol.length() + 1);
            }
        }
        return null;
    }

    /**
     * One round against {@code broker} (started with {@link #security}, its start-up checked by {@code w} over
     * PLAINTEXT): the SCRAM user made, the negotiated sessions noted, then each protocol's workloads.
     */
    void round(final SideBySide sink, final Kind kind, final int round, final BrokerProcess broker, final Workloads w) throws Exception
    {
        security.addScramUser(broker.bootstrap(), broker.bootstrap(BrokerSecurity.SASL_SSL), 120_000);
        final List<String> order = new ArrayList<>(options.security);
        if (round % 2 == 0)
        {
            Collections.reverse(order);
        }
        for (final String protocol : order)
        {
            if (!BrokerSecurity.PLAINTEXT.equals(protocol))
            {
                final String session = protocol + " " + security.negotiated(broker.listenerPort(protocol));
                sessions.computeIfAbsent(kind, k -> new TreeSet<>()).add(session);
                System.out.println(kind.label + " negotiated: " + session);
            }
            measureOver(sink, kind, round, broker, protocol, new Workloads(broker.bootstrap(protocol), w.problems, security.client(protocol)));
        }
    }

    private void measureOver(final SideBySide sink, final Kind kind, final int round, final BrokerProcess broker, final String protocol,
        final Workloads w) throws Exception
    {
        final String prefix = BrokerSecurity.lower(protocol);
        final String acks1 = prefix + "-tp-1";
        w.createTopics(List.of(acks1, prefix + "-tp-all", prefix + "-load", prefix + "-sync"));
        for (final String acks : new String[] {"1", "all"})
        {
            final long cpuBefore = broker.cpuNanos();
            final long clientBefore = SideBySide.runnerCpuNanos();
            final double[] t = w.throughput(prefix + "-tp-" + acks, acks, "none", options.records);
            final String name = name(protocol, "producer throughput acks=" + acks);
            perMegabyte(sink, kind, name, broker.cpuNanos() - cpuBefore, SideBySide.runnerCpuNanos() - clientBefore);
            sink.add(kind, name, "records/s", true, t[0]);
            sink.add(kind, name, "MB/s", true, t[1]);
            System.out.printf(Locale.ROOT, "%s: %.0f records/s, %.1f MB/s%n", name, t[0], t[1]);
        }

        final long cpuBefore = broker.cpuNanos();
        final long clientBefore = SideBySide.runnerCpuNanos();
        final double[] c = w.consume(acks1, options.records);
        final String consumer = name(protocol, "consumer throughput (1 consumer, data already written)");
        perMegabyte(sink, kind, consumer, broker.cpuNanos() - cpuBefore, SideBySide.runnerCpuNanos() - clientBefore);
        sink.add(kind, consumer, "MB/s", true, c[0]);
        sink.add(kind, consumer, "records/s", true, c[1]);
        System.out.printf(Locale.ROOT, "%s: %.1f MB/s, %.0f records/s%n", consumer, c[0], c[1]);

        final String load = name(protocol, "latency at " + options.tlsRate + " records/s (acks=1, send to ack)");
        final Probe probe = Probe.start(broker);
        final Histogram h = w.fixedLoad(prefix + "-load", options.tlsRate, options.rateSeconds);
        sink.context(kind, round, load, probe.stop());
        sink.percentiles(kind, load, h);
        System.out.printf(Locale.ROOT, "%s: p50 %d p99 %d p99.9 %d max %d us (%d samples)%n", load, h.getValueAtPercentile(50),
            h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(), h.getTotalCount());

        final String perRecord = name(protocol, "per-record send().get() acks=1");
        final Probe syncProbe = Probe.start(broker);
        final Histogram s = (Histogram) w.perRecord(prefix + "-sync", "1", options.syncRecords)[3];
        sink.context(kind, round, perRecord, syncProbe.stop());
        sink.add(kind, perRecord, "p50 us", false, s.getValueAtPercentile(50));
        sink.add(kind, perRecord, "p99 us", false, s.getValueAtPercentile(99));
        sink.add(kind, perRecord, "p99.9 us", false, s.getValueAtPercentile(99.9));
        System.out.printf(Locale.ROOT, "%s: p50 %d p99 %d p99.9 %d us%n", perRecord, s.getValueAtPercentile(50),
            s.getValueAtPercentile(99), s.getValueAtPercentile(99.9));
    }

    private void perMegabyte(final SideBySide sink, final Kind kind, final String name, final long brokerCpuNanos, final long clientCpuNanos)
    {
        final double mb = SideBySide.megabytes(options.records);
        sink.add(kind, name, "broker CPU ms per MB", false, brokerCpuNanos / 1e6 / mb);
        sink.add(kind, name, "client CPU ms per MB (the runner's JVM)", false, clientCpuNanos / 1e6 / mb);
    }

    /** What the JSON says of the suite's settings (SideBySide writes the rest); a difference between the brokers' sessions is a problem. */
    List<String> settings(final List<String> problems)
    {
        final List<String> out = new ArrayList<>();
        out.add("secured suite (issue 18): " + security.describe());
        out.add("over each of " + options.security + " (the order reversed every other round), clients of that listener with the "
            + "same settings for both brokers, each protocol its own topics: producer throughput " + options.records + " records "
            + "of 1 KiB at acks=1 and at acks=all, no compression, batch.size=65536, linger.ms=5, send with callback then flush; "
            + "consumer throughput: one consumer (assign, default fetch sizes) reading the acks=1 topic from offset 0; latency "
            + "at fixed load: acks=1, linger.ms=0, " + options.tlsRate + " records/s for " + options.rateSeconds + " s after a "
            + "1 s warm-up, send() to callback; per-record: " + options.syncRecords + " x send().get() acks=1, linger.ms=0, "
            + "after 200 warm-up sends; broker and client CPU per MB as in the default suite; the start-up row is measured on "
            + "the PLAINTEXT listener with the TLS listeners configured");
        final List<String> negotiated = new ArrayList<>();
        sessions.forEach((kind, s) -> negotiated.add(kind.label + ": " + String.join(", ", s)));
        out.add("negotiated (a handshake with each TLS listener as the clients make it, each round): " + String.join("; ", negotiated));
        if (sessions.size() == 2 && !sessions.get(Kind.KAFKA).equals(sessions.get(Kind.FERRITE)))
        {
            problems.add("the brokers negotiated different TLS sessions: " + negotiated);
        }
        out.add("targets (issue 18): Ferrite at least 2x Kafka's records/s (producer) and MB/s (consumer) over each protocol, at "
            + "lower broker CPU per MB (ratio at most 1); the latency rows have no target in the issue");
        return out;
    }

    void close() throws java.io.IOException
    {
        security.delete();
    }
}
