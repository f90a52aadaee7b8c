package io.ferrite.replication;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The active controller's suspicion that a broker's process is gone (the bookkeeping of {@link CrashFencing}, with
 * the time given, so a test steps it): a broker is suspected when the connection that carried its heartbeats closes,
 * or, when this controller becomes active, for every unfenced broker (the connections went to the old controller,
 * whose node may be the one that died). A suspect is due {@code graceMs} after it was raised; any heartbeat of the
 * broker ends the suspicion. What a due suspect costs is {@link CrashFencing}'s: a connection attempt to its
 * listener, and the fence only when that is refused.
 *
 * <p>Thread-safe (one lock): heartbeats and lost connections are told by the controller listener's connection
 * threads, activation and {@link #due} by the fencing thread. Never on a hot path: a broker heartbeats every
 * {@code broker.heartbeat.interval.ms} (2 s).
 */
final class CrashSuspects
{
    /** A suspected broker: its id, the broker epoch it was suspected at, when it is due, the heartbeat count then. */
    record Suspect(int broker, long epoch, long dueMs, long heartbeatsSeen)
    {
    }

    private final long graceMs;
    /** Heartbeats this node has handed to its controller, per broker: a count a suspicion is compared with. */
    private final Map<Integer, Long> heartbeats = new HashMap<>();
    /** The last metadata offset each broker's heartbeat named (the fence's heartbeat names it again). */
    private final Map<Integer, Long> offsets = new HashMap<>();
    private final Map<Integer, Suspect> suspects = new HashMap<>();
    private boolean active;

    CrashSuspects(final long graceMs)
    {
        this.graceMs = graceMs;
    }

    /**
     * {@code broker} heartbeated (epoch {@code epoch}, metadata offset {@code offset}): no longer a suspect. Returns
     * the token a connection keeps to tell its loss with ({@link #connectionLost}).
     */
    synchronized long heartbeat(final int broker, final long epoch, final long offset)
    {
        final long count = heartbeats.merge(broker, 1L, Long::sum);
        offsets.put(broker, offset);
        suspects.remove(broker);
        return count;
    }

    /**
     * The connection whose last heartbeat was {@code broker}'s at {@code epoch}, {@code token} the answer of
     * {@link #heartbeat} then, ended at {@code nowMs}. Ignored when another heartbeat of the broker came since (it
     * reconnected first) or this controller is not active (the broker follows the active one).
     */
    synchronized void connectionLost(final int broker, final long epoch, final long token, final long nowMs)
    {
        if (active && heartbeats.getOrDefault(broker, 0L) == token)
        {
            suspects.put(broker, new Suspect(broker, epoch, nowMs + graceMs, token));
        }
    }

    /**
     * This node's controller became active at {@code nowMs}: every broker of {@code unfencedEpochs} (id to broker
     * epoch, this node's own left out by the caller) is a suspect until it heartbeats here.
     */
    synchronized void activated(final Map<Integer, Long> unfencedEpochs, final long nowMs)
    {
        active = true;
        suspects.clear();
        unfencedEpochs.forEach((broker, epoch) ->
            suspects.put(broker, new Suspect(broker, epoch, nowMs + graceMs, heartbeats.getOrDefault(broker, 0L))));
    }

    /** This node's controller is no longer active: no suspect (the next active controller makes its own). */
    synchronized void deactivated()
    {
        active = false;
        suspects.clear();
    }

    synchronized boolean active()
    {
        return active;
    }

    /** The suspects due at {@code nowMs}, removed: the caller probes each, then {@link #rearm}s or fences it. */
    synchronized List<Suspect> due(final long nowMs)
    {
        final List<Suspect> due = new ArrayList<>();
        suspects.values().removeIf(s ->
        {
            if (s.dueMs() <= nowMs)
            {
                due.add(s);
                return true;
            }
            return false;
        });
        return due;
    }

    /** Whether {@code suspect} still stands: active, and no heartbeat of its broker since it was raised. */
    synchronized boolean stands(final Suspect suspect)
    {
        return active && heartbeats.getOrDefault(suspect.broker(), 0L) == suspect.heartbeatsSeen();
    }

    /**
     * {@code suspect}'s listener still answered (the process lives, paused or cut off, or the probe could not tell):
     * it stays a suspect, due again {@code graceMs} after {@code nowMs}, while it {@link #stands}. Kafka's session
     * timeout fences it meanwhile if it stays silent; a later refusal (it died after all) fences it then.
     */
    synchronized void rearm(final Suspect suspect, final long nowMs)
    {
        if (stands(suspect) && !suspects.containsKey(suspect.broker()))
        {
            suspects.put(suspect.broker(), new Suspect(suspect.broker(), suspect.epoch(), nowMs + graceMs,
                suspect.heartbeatsSeen()));
        }
    }

    /** The metadata offset {@code broker}'s last heartbeat here named, 0 when none came. */
    synchronized long lastOffset(final int broker)
    {
        return offsets.getOrDefault(broker, 0L);
    }

    /** How many are suspected now (tests). */
    synchronized int size()
    {
        return suspects.size();
    }
}
