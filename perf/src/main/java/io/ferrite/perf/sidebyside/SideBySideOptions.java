package io.ferrite.perf.sidebyside;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The side-by-side runner's command line (see {@link SideBySide}). */
final class SideBySideOptions
{
    int rounds = 2;
    String heap = "1g";
    int records = 200_000;
    int[] rates = {5_000, 20_000};
    double rateSeconds = 10;
    int syncRecords = 1000;
    int e2eRate = 1000;
    double e2eSeconds = 10;
    int toolRecords = 200_000;
    int toolE2eRecords = 2000;
    /** The transactional suite (issue 12) instead of the default one: see {@link TxnRound}. */
    boolean transactions;
    /** Records per transactional setting, measured; a tenth as many more go first, unmeasured. */
    int txnRecords = 200_000;
    /** Records per transaction, one setting each. */
    int[] txnSizes = {100, 1000};
    /** Reads of each transactional topic per isolation level, alternating read_committed and read_uncommitted. */
    int txnReads = 5;
    /** Records per transaction of the paced transactional run (0: none), see {@link TxnRound}. */
    int txnPacedSize = 100;
    /** Transactions per second of the paced run: below either broker's saturation, so both see the same load. */
    int txnPacedRate = 50;
    double txnPacedSeconds = 20;
    /** The client latency table (issue 15) instead of the default suite: see {@link ClientLatency}. */
    boolean clientLatency;
    /** Fixed rates (records/s) of the client latency cells. */
    int[] clientRates = {1_000, 10_000, 50_000};
    /** Measured seconds of each client latency cell, after {@link #cellWarmupSeconds} of records left out. */
    double cellSeconds = 8;
    double cellWarmupSeconds = 2;
    /** How the Ferrite client's thread waits between duty cycles: backoff, yield or spin ({@link ClientLatency#idle}). */
    String clientIdle = "backoff";
    /** How many times each broker's latency cells run, one pass after the other (a profile of order and warm-up). */
    int clientRepeats = 1;
    /** Seconds each broker is driven by both clients, unmeasured, before its latency cells (half each client). */
    double clientBrokerWarmupSeconds = 20;
    /**
     * The secured suite (issue 18) instead of the default one when not empty: the security protocols to measure over
     * (SSL, SASL_SSL; PLAINTEXT the same brokers' baseline), see {@link TlsSuite}.
     */
    final List<String> security = new ArrayList<>();
    /** The secured suite's TLS version: both brokers' and the clients' ssl.enabled.protocols and ssl.protocol. */
    String tlsProtocol = "TLSv1.3";
    /** The secured suite's ssl.cipher.suites on both brokers and the clients (comma-separated; empty: the JDK's defaults). */
    String cipherSuites = "";
    /** The secured suite's fixed load, records/s (acks=1, linger.ms=0), for {@link #rateSeconds}. */
    int tlsRate = 5_000;
    boolean skipKafka;
    boolean skipTools;
    final List<String> ferriteOverrides = new ArrayList<>();
    final List<String> kafkaOverrides = new ArrayList<>();
    /** Added to both brokers' JVM options (a profiler agent, JFR): not part of a recorded comparison. */
    final List<String> brokerJvmOptions = new ArrayList<>();
    Path out;
    String classPath = System.getProperty("java.class.path");
    String command = "";

    static SideBySideOptions parse(final String... args)
    {
        final SideBySideOptions o = new SideBySideOptions();
        o.command = "side-by-side " + String.join(" ", args);
        for (int i = 0; i < args.length; i++)
        {
            final String a = args[i];
            switch (a)
            {
                case "--smoke" ->
                {
                    o.rounds = 1;
                    o.heap = "256m";
                    o.records = 2000;
                    o.rates = new int[] {1000};
                    o.rateSeconds = 1;
                    o.syncRecords = 50;
                    o.e2eRate = 500;
                    o.e2eSeconds = 1;
                    o.toolRecords = 2000;
                    o.toolE2eRecords = 50;
                    o.txnRecords = 2000;
                    o.txnReads = 1;
                    o.txnPacedSeconds = 1;
                    o.clientRates = new int[] {1000};
                    o.clientBrokerWarmupSeconds = 1;
                    o.cellSeconds = 1;
                    o.cellWarmupSeconds = 0.5;
                    o.tlsRate = 1000;
                }
                case "--transactions" -> o.transactions = true;
                case "--txn-records" -> o.txnRecords = Integer.parseInt(args[++i]);
                case "--txn-sizes" -> o.txnSizes = ints(args[++i]);
                case "--txn-reads" -> o.txnReads = Integer.parseInt(args[++i]);
                case "--txn-paced-size" -> o.txnPacedSize = Integer.parseInt(args[++i]);
                case "--txn-paced-rate" -> o.txnPacedRate = Integer.parseInt(args[++i]);
                case "--txn-paced-seconds" -> o.txnPacedSeconds = Double.parseDouble(args[++i]);
                case "--client-latency" -> o.clientLatency = true;
                case "--client-rates" -> o.clientRates = ints(args[++i]);
                case "--cell-seconds" -> o.cellSeconds = Double.parseDouble(args[++i]);
                case "--cell-warmup-seconds" -> o.cellWarmupSeconds = Double.parseDouble(args[++i]);
                case "--client-idle" -> o.clientIdle = args[++i];
                case "--client-repeats" -> o.clientRepeats = Integer.parseInt(args[++i]);
                case "--client-broker-warmup-seconds" -> o.clientBrokerWarmupSeconds = Double.parseDouble(args[++i]);
                case "--security" -> o.security.addAll(protocols(args[++i]));
                case "--tls-protocol" -> o.tlsProtocol = args[++i];
                case "--cipher-suites" -> o.cipherSuites = args[++i];
                case "--tls-rate" -> o.tlsRate = Integer.parseInt(args[++i]);
                case "--skip-kafka" -> o.skipKafka = true;
                case "--skip-tools" -> o.skipTools = true;
                case "--rounds" -> o.rounds = Integer.parseInt(args[++i]);
                case "--heap" -> o.heap = args[++i];
                case "--records" -> o.records = Integer.parseInt(args[++i]);
                case "--rates" -> o.rates = ints(args[++i]);
                case "--rate-seconds" -> o.rateSeconds = Double.parseDouble(args[++i]);
                case "--sync-records" -> o.syncRecords = Integer.parseInt(args[++i]);
                case "--e2e-rate" -> o.e2eRate = Integer.parseInt(args[++i]);
                case "--e2e-seconds" -> o.e2eSeconds = Double.parseDouble(args[++i]);
                case "--tool-records" -> o.toolRecords = Integer.parseInt(args[++i]);
                case "--tool-e2e-records" -> o.toolE2eRecords = Integer.parseInt(args[++i]);
                case "--ferrite-override" -> o.ferriteOverrides.add(args[++i]);
                case "--kafka-override" -> o.kafkaOverrides.add(args[++i]);
                case "--broker-jvm-option" -> o.brokerJvmOptions.add(args[++i]);
                case "--out" -> o.out = Path.of(args[++i]);
                case "--classpath" -> o.classPath = args[++i];
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        if (o.transactions && !o.security.isEmpty())
        {
            throw new IllegalArgumentException("--transactions and --security are two suites: run them one at a time");
        }
        return o;
    }

    private static List<String> protocols(final String commaSeparated)
    {
        final List<String> out = new ArrayList<>();
        for (final String part : commaSeparated.split(","))
        {
            final String protocol = part.trim().toUpperCase(java.util.Locale.ROOT);
            if (!BrokerSecurity.PROTOCOLS.contains(protocol))
            {
                throw new IllegalArgumentException("--security takes " + BrokerSecurity.PROTOCOLS + ", not " + part);
            }
            if (!out.contains(protocol))
            {
                out.add(protocol);
            }
        }
        return out;
    }

    private static int[] ints(final String commaSeparated)
    {
        final String[] parts = commaSeparated.split(",");
        final int[] values = new int[parts.length];
        for (int j = 0; j < parts.length; j++)
        {
            values[j] = Integer.parseInt(parts[j].trim());
        }
        return values;
    }
}
