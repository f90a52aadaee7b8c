package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which partitions of a coordinator's internal topic this node coordinates (issue 14): alone
 * ({@link #followsLeaders} never called), all of them; in a cluster, as Kafka 4.4's coordinators, those it leads.
 * The group coordinator ({@code __consumer_offsets}) and the transaction coordinator ({@code __transaction_state})
 * each have one; what a load and an unload do is theirs ({@link #load}, {@link #unload}).
 *
 * <p>When this node becomes a partition's leader ({@link #led}, once its log thread leads it) the coordinators' agent
 * replays that partition's log into memory, and the partition's keys are COORDINATOR_LOAD_IN_PROGRESS until then; when
 * it stops leading it ({@link #resigned}) they are NOT_COORDINATOR at once and the agent unloads them. A key of a
 * partition never led here is NOT_COORDINATOR.
 *
 * <p>{@link #led} and {@link #resigned} are called by the cluster's threads (the metadata image's changes), in the
 * image's order; they change {@link #leading} and raise a flag, never queue a task (the request queue is bounded: a
 * load or an unload dropped by a full queue would be lost). At the start of each of its passes, before the requests
 * ({@link #reconcile}, a {@link CoordinatorDuties#beforeCalls}), the agent brings what is in memory in line with
 * {@link #leading}: it unloads each partition no longer led, or led again after a resignation (or, for the transaction
 * coordinator, at a higher leader epoch: {@link Lead}) — a new tenure: another node may have written to it meanwhile —,
 * before it loads any, then loads one partition led and not loaded yet per
 * pass (the requests of the keys loaded already run between two loads). A load that throws leaves the partition's
 * keys NOT_COORDINATOR until its next change of leadership (as Kafka's failed load). {@link #error} is read on the agent.
 */
public abstract class PartitionOwnership
{
    /** Where a key's coordinator is, for FindCoordinator in a cluster. */
    public interface Locator
    {
        /** FindCoordinator's answer for a key: NONE with a node, or COORDINATOR_NOT_AVAILABLE (any network thread). */
        Located locate(String key);
    }

    /** A FindCoordinator answer: {@code error} NONE with the coordinator's node, id and address. */
    public record Located(short error, int nodeId, String host, int port)
    {
    }

    private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

    private final String topic;
    /** What the keys are, for the log ("groups", "transactional ids"). */
    private final String keys;
    /** Wakes the coordinators' agent. */
    private final Runnable wake;
    /** Whether a lead at a higher leader epoch is a new tenure even with no resignation seen ({@link Lead}). */
    private final boolean reloadsAtEachElection;
    /** In a cluster: keys are coordinated where their partition is led. */
    private volatile boolean cluster;
    private volatile Locator locator;

    /**
     * A leadership of a partition here: its leader epoch, and its tenure, new at each lead that follows a resignation
     * (or none). A lead at a higher leader epoch with no resignation seen (one image change can take this node from
     * leader at 5 to leader at 7, another node's leadership at 6 in between) is a new tenure where the coordinator
     * reloads at each election ({@link #reloadsAtEachElection}: the transaction coordinator, as Kafka 4.4's
     * {@code TransactionCoordinator.onElection}; review 1 of txnsend, H1), and keeps the tenure, with the new epoch,
     * where it does not (the group coordinator, as Kafka 4.4's {@code CoordinatorRuntime}, which answers an election of
     * an active partition at a higher epoch "already active" and keeps its memory). A lead at the same epoch or a lower
     * one changes nothing.
     */
    private record Lead(int epoch, long tenure)
    {
    }

    /** The partitions this node leads (any thread: the image's changes write it). */
    private final Map<Integer, Lead> leading = new ConcurrentHashMap<>();
    /** Tenures handed out so far. */
    private final AtomicLong tenures = new AtomicLong();
    /** Raised by each change of {@link #leading}, lowered by the agent as it reconciles memory with it. */
    private final AtomicBoolean changed = new AtomicBoolean();
    /** The partitions whose keys are in memory, by the tenure they were loaded in (agent only). */
    private final Map<Integer, Long> loaded = new HashMap<>();
    /** The partitions whose load threw, by the tenure it was in: NOT_COORDINATOR until it changes (agent only). */
    private final Map<Integer, Long> failed = new HashMap<>();

    /**
     * For {@code topic}'s partitions of {@code keys}, loaded on the coordinators' agent, which {@code wake} wakes;
     * reloaded at each lead at a higher leader epoch when {@code reloadsAtEachElection} ({@link Lead}).
     */
    protected PartitionOwnership(final String topic, final String keys, final Runnable wake, final boolean reloadsAtEachElection)
    {
        this.topic = topic;
        this.keys = keys;
        this.wake = wake;
        this.reloadsAtEachElection = reloadsAtEachElection;
    }

    /** The internal topic whose leaders this follows. */
    public final String topic()
    {
        return topic;
    }

    /** Before the agent runs: this node is part of a cluster, and coordinates the keys of the partitions it leads only. */
    public final void followsLeaders(final Locator locator)
    {
        this.locator = locator;
        cluster = true;
    }

    /** FindCoordinator's locator in a cluster, or null alone (this node is every key's coordinator). */
    public final Locator locator()
    {
        return locator;
    }

    /** Whether keys are placed by the topic's leaders ({@link #followsLeaders}). */
    public final boolean followingLeaders()
    {
        return cluster;
    }

    /**
     * On the agent: NONE when this node coordinates partition {@code partition}'s keys now (always alone), else
     * NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS.
     */
    public final short partitionError(final int partition)
    {
        if (!cluster)
        {
            return Errors.NONE;
        }
        final Lead lead = leading.get(partition);
        if (lead == null || Long.valueOf(lead.tenure).equals(failed.get(partition)))
        {
            return Errors.NOT_COORDINATOR;
        }
        return Long.valueOf(lead.tenure).equals(loaded.get(partition)) ? Errors.NONE : Errors.COORDINATOR_LOAD_IN_PROGRESS;
    }

    /** Whether some partition led here is not loaded yet (agent only; alone, never). */
    public final boolean anyLoading()
    {
        if (!cluster)
        {
            return false;
        }
        for (final Map.Entry<Integer, Lead> e : leading.entrySet())
        {
            final Long tenure = e.getValue().tenure;
            if (!tenure.equals(loaded.get(e.getKey())) && !tenure.equals(failed.get(e.getKey())))
            {
                return true;
            }
        }
        return false;
    }

    /** Any thread: this node leads partition {@code partition} at {@code leaderEpoch}; the agent loads it. */
    public final void led(final int partition, final int leaderEpoch)
    {
        leading.compute(partition, (p, was) -> was == null ? new Lead(leaderEpoch, tenures.incrementAndGet())
            : leaderEpoch <= was.epoch ? was
            : new Lead(leaderEpoch, reloadsAtEachElection ? tenures.incrementAndGet() : was.tenure));
        changed();
    }

    /** Any thread: this node no longer leads partition {@code partition}; its keys are NOT_COORDINATOR, the agent unloads them. */
    public final void resigned(final int partition)
    {
        if (leading.remove(partition) != null)
        {
            changed();
        }
    }

    private void changed()
    {
        changed.set(true);
        wake.run();
    }

    /**
     * On the agent, at the start of each pass: unloads what is no longer led (or led in another tenure), then loads one
     * partition led and not loaded; returns how many partitions it unloaded or loaded.
     */
    public final int reconcile()
    {
        if (!changed.get() || !changed.getAndSet(false)) // a plain read first: a single node's pass writes nothing here
        {
            return 0; // a change after this raises the flag again: the next pass sees it
        }
        int work = 0;
        for (final Iterator<Map.Entry<Integer, Long>> it = loaded.entrySet().iterator(); it.hasNext(); )
        {
            final Map.Entry<Integer, Long> e = it.next();
            final Lead lead = leading.get(e.getKey());
            if (lead == null || lead.tenure != e.getValue())
            {
                it.remove();
                unload(e.getKey());
                work++;
            }
        }
        failed.entrySet().removeIf(e ->
        {
            final Lead lead = leading.get(e.getKey());
            return lead == null || lead.tenure != e.getValue();
        });
        for (final Map.Entry<Integer, Lead> e : leading.entrySet())
        {
            final int partition = e.getKey();
            if (!loaded.containsKey(partition) && !failed.containsKey(partition))
            {
                final Lead lead = e.getValue();
                try
                {
                    load(partition, lead.epoch);
                    loaded.put(partition, lead.tenure);
                }
                catch (final RuntimeException ex)
                {
                    failed.put(partition, lead.tenure);
                    unload(partition); // what the replay had put in memory
                    LOG.error("{}-{}: the load of its {} at leader epoch {} failed: they are NOT_COORDINATOR here until its " +
                        "leadership changes", topic, partition, keys, lead.epoch, ex);
                }
                changed.set(true); // more may be due: the next pass looks again, after its requests
                return work + 1;
            }
        }
        return work;
    }

    /** On the agent: replays partition {@code partition}'s log into memory, led at {@code leaderEpoch}; a throw fails the load. */
    protected abstract void load(int partition, int leaderEpoch);

    /** On the agent: forgets partition {@code partition}'s keys (no longer led here, or its load failed). */
    protected abstract void unload(int partition);
}
