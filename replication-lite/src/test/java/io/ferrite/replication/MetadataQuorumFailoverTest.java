package io.ferrite.replication;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.ferrite.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Three voters in child JVMs ({@link QuorumMember}) on loopback; the leader is SIGKILLed while it registers
 * brokers. A new leader is elected and commits, and every record any leader had acknowledged is in the
 * new leader's committed log, at the offset it was acknowledged at, as it is in the other survivor's.
 */
class MetadataQuorumFailoverTest
{
    /** JVM start alone has taken 15-35 s on the shared 2-core machine (the spike's figures). */
    private static final Duration DEADLINE = Duration.ofSeconds(180);
    private static final Pattern LINE = Pattern.compile("^(ACKED|COMMITTED) offset=(\\d+) incarnation=(\\S+) broker=\\d+ epoch=(\\d+)");

    @TempDir
    Path dir;

    private final Process[] members = new Process[3];
    private final Thread[] readers = new Thread[3];
    /** Per node: offset -> incarnation of the records it applied, and of the records it acknowledged as leader. */
    private final List<Map<Long, String>> committed = List.of(new ConcurrentHashMap<>(), new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
    private final List<Map<Long, String>> acked = List.of(new ConcurrentHashMap<>(), new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
    /** Per node: the highest epoch in which it acknowledged a record as leader. */
    private final int[] ackedEpoch = new int[3];
    private final Queue<String> output = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stopMembers()
    {
        for (final Process member : members)
        {
            if (member != null)
            {
                member.destroyForcibly();
            }
        }
    }

    @Test
    void aKilledLeaderIsReplacedAndNoAcknowledgedRecordIsLost() throws Exception
    {
        final StringBuilder voters = new StringBuilder();
        for (int id = 1; id <= 3; id++)
        {
            try (ServerSocket probe = new ServerSocket(0))
            {
                voters.append(id == 1 ? "" : ",").append(id).append("@127.0.0.1:").append(probe.getLocalPort());
            }
        }
        for (int id = 1; id <= 3; id++)
        {
            start(id, voters.toString());
        }
        Await.await(() -> acked.stream().anyMatch(records -> records.size() >= 10), DEADLINE,
            () -> "a leader that acknowledged 10 records; output " + tail());
        final int killed = latestLeader(); // leadership may have moved under load: the latest leader it is
        final int killedEpoch = ackedEpoch(killed);
        members[killed - 1].destroyForcibly().waitFor(); // SIGKILL
        readers[killed - 1].join(); // everything it printed before it died is read
        Await.await(() -> latestLeader() != killed && ackedEpoch(latestLeader()) > killedEpoch, DEADLINE,
            () -> "a leader after epoch " + killedEpoch + " that acknowledged a record; output " + tail());
        final int successor = latestLeader();
        final int bystander = 6 - killed - successor;
        // pairs, not a map: two leaders that acknowledged different records at one offset cannot both be found
        final Set<Map.Entry<Long, String>> allAcked = new HashSet<>();
        acked.forEach(records -> allAcked.addAll(Set.copyOf(records.entrySet())));
        Await.await(() -> committed.get(successor - 1).entrySet().containsAll(allAcked) &&
            committed.get(bystander - 1).entrySet().containsAll(allAcked), DEADLINE,
            () -> "both survivors to have all " + allAcked.size() + " acknowledged records at their offsets; missing on " +
                successor + ": " + missing(successor, allAcked) + ", on " + bystander + ": " + missing(bystander, allAcked));
        final Map<Long, String> successorLog = committed.get(successor - 1);
        committed.get(bystander - 1).forEach((offset, incarnation) ->
        {
            if (successorLog.containsKey(offset))
            {
                assertEquals(successorLog.get(offset), incarnation, "the survivors' logs differ at offset " + offset);
            }
        });
    }

    /** The node that acknowledged a record in the highest epoch so far. */
    private synchronized int latestLeader()
    {
        int leader = 1;
        for (int id = 2; id <= 3; id++)
        {
            if (ackedEpoch[id - 1] > ackedEpoch[leader - 1])
            {
                leader = id;
            }
        }
        return leader;
    }

    private String missing(final int node, final Set<Map.Entry<Long, String>> wanted)
    {
        return wanted.stream().filter(e -> !e.getValue().equals(committed.get(node - 1).get(e.getKey())))
            .map(Map.Entry::getKey).sorted().limit(20).map(String::valueOf).collect(Collectors.joining(",", "[", "]"));
    }

    private String tail()
    {
        final List<String> lines = List.copyOf(output);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    private synchronized int ackedEpoch(final int id)
    {
        return ackedEpoch[id - 1];
    }

    private synchronized void noteAckedEpoch(final int id, final int epoch)
    {
        ackedEpoch[id - 1] = Math.max(ackedEpoch[id - 1], epoch);
    }

    private void start(final int id, final String voters) throws IOException
    {
        final Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-Xms32m", "-cp", System.getProperty("java.class.path"), QuorumMember.class.getName(),
            Integer.toString(id), dir.resolve("node-" + id).toString(), voters).redirectErrorStream(true).start();
        members[id - 1] = process;
        readers[id - 1] = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = in.readLine()) != null)
                {
                    final Matcher m = LINE.matcher(line);
                    if (m.matches())
                    {
                        (m.group(1).equals("ACKED") ? acked : committed).get(id - 1).put(Long.parseLong(m.group(2)), m.group(3));
                        if (m.group(1).equals("ACKED"))
                        {
                            noteAckedEpoch(id, Integer.parseInt(m.group(4)));
                        }
                    }
                    else
                    {
                        output.add(id + "| " + line);
                    }
                }
            }
            catch (final IOException ex)
            {
                output.add(id + "| output ended: " + ex);
            }
        }, "member-" + id + "-output");
        readers[id - 1].setDaemon(true);
        readers[id - 1].start();
    }
}
