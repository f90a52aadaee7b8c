package io.ferrite.perf.sidebyside;

import io.ferrite.client.ProducerConfig;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * Two settings of the Ferrite client on one cell of {@link ClientLatency}, interleaved, against one Ferrite broker
 * (issue 15's 1 000/s tail): each round runs the bare socket ping-pong (the floor, read for the load's share), then the
 * acks=1 cell with its consumer (send to ack, send to poll) with setting A and with setting B, the order swapped every
 * other round, each on a fresh topic. A setting is the client's idle strategy ({@code backoff}, {@code yield},
 * {@code spin}: {@link ClientLatency#idle}) or {@code inflight1} (backoff, one request in flight). Prints each cell and
 * the load; with {@code -Dclientlatency.trace=DIR} each cell's per-record trace too.
 * <pre>java -cp ... io.ferrite.perf.sidebyside.ClientTailProfile [rounds] [rate] [warm-up s] [seconds] [A] [B]</pre>
 */
public final class ClientTailProfile
{
    private ClientTailProfile()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        final int rate = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        final double warm = args.length > 2 ? Double.parseDouble(args[2]) : 2;
        final double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 8;
        final String[] names = {args.length > 4 ? args[4] : "backoff", args.length > 5 ? args[5] : "yield"};
        final BrokerProcess broker = BrokerProcess.start(Kind.FERRITE, "1g", System.getProperty("java.class.path"), List.of(), List.of());
        try
        {
            final Workloads w = new Workloads(broker.bootstrap(), p -> System.out.println("PROBLEM " + p));
            w.firstProduce("startup", 180_000);
            final List<String> topics = new ArrayList<>();
            for (int r = 1; r <= rounds; r++)
            {
                for (final String n : names)
                {
                    topics.add("tail-" + n + "-" + r);
                }
            }
            w.createTopics(topics);
            ClientLatency.awaitTopics(broker.bootstrap(), topics);
            for (int r = 1; r <= rounds; r++)
            {
                final FixedRate floor = new FixedRate(rate, warm, seconds);
                final CellResult pp = PingPong.run(Workloads.RECORD_BYTES, floor);
                print("round " + r + " ping-pong", pp.ack());
                for (int k = 0; k < 2; k++)
                {
                    final int s = r % 2 == 1 ? k : 1 - k;
                    final String load = Machine.loadAverage();
                    final FixedRate schedule = new FixedRate(rate, warm, seconds);
                    final CellResult c = FerriteClientCell.run(broker.bootstrap(), w.payload, "tail-" + names[s] + "-" + r, 1,
                        schedule, true, ClientLatency.idle(idle(names[s])), setting(names[s]));
                    print("round " + r + " " + names[s] + " ack (load " + load + ")", c.ack());
                    print("round " + r + " " + names[s] + " e2e", c.endToEnd());
                    if (c.failed() > 0)
                    {
                        System.out.println("  failed " + c.failed() + ": " + c.firstFailure());
                    }
                }
            }
        }
        finally
        {
            broker.close();
        }
    }

    /** A setting's idle strategy: {@code backoff}, {@code yield}, {@code spin}; {@code inflight1} backs off. */
    private static String idle(final String setting)
    {
        return setting.equals("inflight1") ? "backoff" : setting;
    }

    /** {@code inflight1}: one request in flight (kafka-clients' order-keeping mode); the producer's defaults otherwise. */
    private static UnaryOperator<ProducerConfig> setting(final String setting)
    {
        return setting.equals("inflight1") ? c -> c.maxInFlightRequestsPerConnection(1) : c -> c;
    }

    private static void print(final String what, final Histogram h)
    {
        System.out.printf(Locale.ROOT, "%-48s p50 %7d p99 %7d p99.9 %7d max %7d us%n", what, h.getValueAtPercentile(50),
            h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue());
    }
}
