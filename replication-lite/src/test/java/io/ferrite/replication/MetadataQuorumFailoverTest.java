package io.ferrite.replication;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Three voters in child JVMs ({@link QuorumMember}) on loopback; the leader, as all three voters name it, is
 * SIGKILLed while it registers brokers with several appends in flight. Both survivors name a new leader in a
 * later epoch; every record the killed node knew committed and every record any leader acknowledged is in
 * both survivors' logs at its offset; the killed node, restarted on its log, catches up to the survivors.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class MetadataQuorumFailoverTest
{
    /** JVM start alone has taken 15-35 s on the shared 2-core machine (the spike's figures). */
    private static final Duration DEADLINE = Duration.ofSeconds(180);
    private static final Pattern LINE = Pattern.compile("^(ACKED|COMMITTED) offset=(\\d+) incarnation=(\\S+) broker=\\d+ epoch=(\\d+)");
    private static final Pattern LEADER = Pattern.compile("^LEADER node=\\d+ leader=(-?\\d+) epoch=(\\d+)");

    @TempDir
    Path dir;

    private String voters;
    private final Process[] members = new Process[3];
    private final Thread[] readers = new Thread[3];
    /** Per node: offset -> incarnation of the records it applied (since it last started), and of those it acknowledged. */
    @SuppressWarnings("unchecked")
    private final Map<Long, String>[] committed = new Map[3];
    private final List<Map<Long, String>> acked = List.of(new ConcurrentHashMap<>(), new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
    /** Per node: the leader and epoch of its latest LEADER line. */
    private final int[] leaderSeen = {-1, -1, -1};
    private final int[] epochSeen = new int[3];
    /** Per node: the epochs in which it acknowledged records as leader. */
    @SuppressWarnings("unchecked")
    private final Set<Integer>[] ackedEpochs = new Set[] {ConcurrentHashMap.newKeySet(), ConcurrentHashMap.newKeySet(), ConcurrentHashMap.newKeySet()};
    private final Queue<String> output = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stopMembers()
    {
        LoopbackVoters.killAll(members);
    }

    @Test
    void aKilledLeaderIsReplacedNoCommittedRecordIsLostAndItCatchesUpAfterARestart() throws Exception
    {
        voters = LoopbackVoters.voters(LoopbackVoters.addresses(3));
        for (int id = 1; id <= 3; id++)
        {
            start(id);
        }
        // the leader all three name, once it has acknowledged 10 records in the epoch they name
        Await.await(() -> agreedLeader() > 0 && acked.get(agreedLeader() - 1).size() >= 10, DEADLINE,
            () -> "three voters naming one leader that acknowledged 10 records; output " + tail());
        final int killed = agreedLeader();
        final int killedEpoch = epoch(killed);
        members[killed - 1].destroyForcibly().waitFor(); // SIGKILL
        readers[killed - 1].join(); // everything it printed before it died is read
        assertEquals(killed, leader(killed), "the killed node had not heard of another leader: it died leading");
        assertEquals(killedEpoch, epoch(killed), "the killed node died leading in epoch " + killedEpoch);

        final int successor = otherThan(killed, 0);
        final int bystander = otherThan(killed, successor);
        Await.await(() -> leader(successor) > 0 && leader(successor) != killed && epoch(successor) > killedEpoch &&
            leader(bystander) == leader(successor) && epoch(bystander) == epoch(successor) &&
            acked.get(leader(successor) - 1).size() > 0 && ackedAfter(leader(successor), killedEpoch), DEADLINE,
            () -> "both survivors naming a new leader after epoch " + killedEpoch + " that acknowledged a record; output " + tail());

        // pairs, not a map: two leaders that acknowledged different records at one offset cannot both be found
        final Set<Map.Entry<Long, String>> mustSurvive = new HashSet<>(Set.copyOf(committed[killed - 1].entrySet()));
        acked.forEach(records -> mustSurvive.addAll(Set.copyOf(records.entrySet())));
        for (final int survivor : List.of(successor, bystander))
        {
            Await.await(() -> committed[survivor - 1].entrySet().containsAll(mustSurvive), DEADLINE,
                () -> "node " + survivor + " to have all " + mustSurvive.size() + " records the killed node knew committed " +
                    "or a leader acknowledged, at their offsets; missing " + missing(survivor, mustSurvive));
        }
        assertSameWhereBothHave(successor, bystander);

        start(killed); // on its log as SIGKILL left it: replayed from offset 0, its uncommitted tail truncated
        final Set<Map.Entry<Long, String>> survivorsLog = Set.copyOf(committed[successor - 1].entrySet());
        Await.await(() -> committed[killed - 1].entrySet().containsAll(survivorsLog), DEADLINE,
            () -> "the restarted node " + killed + " to catch up with " + survivorsLog.size() + " records; missing " +
                missing(killed, survivorsLog));
        assertSameWhereBothHave(successor, killed);
    }

    private void assertSameWhereBothHave(final int a, final int b)
    {
        final Map<Long, String> aLog = Map.copyOf(committed[a - 1]);
        Map.copyOf(committed[b - 1]).forEach((offset, incarnation) ->
        {
            if (aLog.containsKey(offset))
            {
                assertEquals(aLog.get(offset), incarnation, "the logs of " + a + " and " + b + " differ at offset " + offset);
            }
        });
    }

    private static int otherThan(final int one, final int two)
    {
        for (int id = 1; id <= 3; id++)
        {
            if (id != one && id != two)
            {
                return id;
            }
        }
        throw new IllegalArgumentException();
    }

    /** The leader all three voters name in the same epoch, or -1. */
    private synchronized int agreedLeader()
    {
        final boolean agreed = leaderSeen[0] > 0 && leaderSeen[0] == leaderSeen[1] && leaderSeen[1] == leaderSeen[2] &&
            epochSeen[0] == epochSeen[1] && epochSeen[1] == epochSeen[2];
        return agreed ? leaderSeen[0] : -1;
    }

    private synchronized int leader(final int id)
    {
        return leaderSeen[id - 1];
    }

    private synchronized int epoch(final int id)
    {
        return epochSeen[id - 1];
    }

    private synchronized void noteLeader(final int id, final int leader, final int epoch)
    {
        leaderSeen[id - 1] = leader;
        epochSeen[id - 1] = epoch;
    }

    /** Whether {@code id} acknowledged a record as leader of an epoch after {@code epoch}. */
    private boolean ackedAfter(final int id, final int epoch)
    {
        return ackedEpochs[id - 1].stream().anyMatch(e -> e > epoch);
    }

    private String missing(final int node, final Set<Map.Entry<Long, String>> wanted)
    {
        return wanted.stream().filter(e -> !e.getValue().equals(committed[node - 1].get(e.getKey())))
            .map(Map.Entry::getKey).sorted().limit(20).map(String::valueOf).collect(Collectors.joining(",", "[", "]"));
    }

    private String tail()
    {
        final List<String> lines = List.copyOf(output);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    private void start(final int id) throws IOException
    {
        committed[id - 1] = new ConcurrentHashMap<>();
        final Map<Long, String> applied = committed[id - 1];
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
                    final Matcher leader = LEADER.matcher(line);
                    if (m.matches())
                    {
                        (m.group(1).equals("ACKED") ? acked.get(id - 1) : applied).put(Long.parseLong(m.group(2)), m.group(3));
                        if (m.group(1).equals("ACKED"))
                        {
                            ackedEpochs[id - 1].add(Integer.parseInt(m.group(4)));
                        }
                    }
                    else if (leader.matches())
                    {
                        noteLeader(id, Integer.parseInt(leader.group(1)), Integer.parseInt(leader.group(2)));
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
