package io.ferrite.replication;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bookkeeping of crash fencing, stepped with explicit times ({@link CrashSuspects}), and its probe on real
 * loopback sockets ({@link CrashFencing#probe}): what it fences is what a three-node cluster shows
 * ({@code CrashFencingClusterTest} in the broker).
 */
class CrashSuspectsTest
{
    private static final long GRACE = 500;

    private final CrashSuspects suspects = new CrashSuspects(GRACE);

    @Test
    void aLostHeartbeatConnectionIsDueAfterTheGraceUnlessTheBrokerHeartbeatsMeanwhile()
    {
        suspects.activated(Map.of(), 0);
        final long token2 = suspects.heartbeat(2, 7, 100);
        final long token3 = suspects.heartbeat(3, 9, 100);
        suspects.connectionLost(2, 7, token2, 1_000);
        suspects.connectionLost(3, 9, token3, 1_000);
        assertEquals(List.of(), suspects.due(1_499), "not before the grace");
        suspects.heartbeat(3, 9, 120); // broker 3 came back on a new connection
        final List<CrashSuspects.Suspect> due = suspects.due(1_500);
        assertEquals(1, due.size(), "only broker 2 stays silent: " + due);
        assertEquals(2, due.get(0).broker());
        assertEquals(7, due.get(0).epoch());
        assertTrue(suspects.stands(due.get(0)));
        assertEquals(100, suspects.lastOffset(2));
        assertEquals(List.of(), suspects.due(5_000), "taken once");
    }

    @Test
    void aConnectionLostAfterItsBrokerHeartbeatedElsewhereIsNoSuspicion()
    {
        suspects.activated(Map.of(), 0);
        final long old = suspects.heartbeat(2, 7, 100);
        suspects.heartbeat(2, 7, 110); // on its new connection, before the old one's thread saw the end
        suspects.connectionLost(2, 7, old, 1_000);
        assertEquals(0, suspects.size());
    }

    @Test
    void anInactiveControllerSuspectsNobody()
    {
        final long token = suspects.heartbeat(2, 7, 100);
        suspects.connectionLost(2, 7, token, 1_000);
        assertEquals(0, suspects.size(), "not active: the broker heartbeats to the active controller");
        suspects.activated(Map.of(2, 7L), 2_000);
        suspects.deactivated();
        assertEquals(List.of(), suspects.due(10_000), "deactivation drops every suspect");
    }

    @Test
    void aNewlyActiveControllerSuspectsEveryUnfencedBrokerUntilItHeartbeatsThere()
    {
        suspects.activated(Map.of(1, 4L, 3, 9L), 1_000);
        suspects.heartbeat(1, 4, 50);
        final List<CrashSuspects.Suspect> due = suspects.due(1_500);
        assertEquals(1, due.size(), "broker 1 heartbeated: " + due);
        assertEquals(3, due.get(0).broker());
        assertEquals(9, due.get(0).epoch());
    }

    @Test
    void aSuspectWhoseListenerAnsweredIsDueAgainAfterAGraceWhileItStaysSilent()
    {
        suspects.activated(Map.of(3, 9L), 0);
        final CrashSuspects.Suspect first = suspects.due(500).get(0);
        suspects.rearm(first, 600);
        assertEquals(List.of(), suspects.due(1_099));
        final CrashSuspects.Suspect again = suspects.due(1_100).get(0);
        assertEquals(3, again.broker());
        suspects.heartbeat(3, 9, 70); // it ran again: the suspicion ends
        assertFalse(suspects.stands(again));
        suspects.rearm(again, 1_200);
        assertEquals(0, suspects.size());
    }

    @Test
    void theProbeTellsARefusedPortFromAListeningOneEvenWhenNothingAccepts() throws IOException
    {
        final InetSocketAddress closed;
        try (ServerSocket gone = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            closed = (InetSocketAddress)gone.getLocalSocketAddress();
        }
        assertEquals(CrashFencing.Probe.REFUSED, CrashFencing.probe(closed, 1000), "nothing listens: a crashed process");
        // a listener whose process never calls accept (SIGSTOPped, a long GC pause): the kernel completes the handshake
        try (ServerSocket paused = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            assertEquals(CrashFencing.Probe.ACCEPTED,
                CrashFencing.probe((InetSocketAddress)paused.getLocalSocketAddress(), 1000));
        }
        assertEquals(CrashFencing.Probe.UNKNOWN, CrashFencing.probe(InetSocketAddress.createUnresolved("nowhere", 1), 1000));
    }

    @Test
    void theGraceIsFerritesSettingAndMinusOneTurnsItOff()
    {
        assertEquals(CrashFencing.DEFAULT_GRACE_MS, CrashFencing.graceMs(Map.of()));
        assertEquals(-1, CrashFencing.graceMs(Map.of(CrashFencing.SETTING, "-1")));
        assertEquals(1000, CrashFencing.graceMs(Map.of(CrashFencing.SETTING, "1000")));
        assertThrows(ConfigException.class, () -> CrashFencing.graceMs(Map.of(CrashFencing.SETTING, "-2")));
        assertThrows(ConfigException.class, () -> CrashFencing.graceMs(Map.of(CrashFencing.SETTING, "soon")));
    }
}
