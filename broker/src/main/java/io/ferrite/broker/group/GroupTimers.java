package io.ferrite.broker.group;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's timer thread, its only owner: every 50 ms, under the coordinator's lock, it
 * expires the member ids given out with MEMBER_ID_REQUIRED and never used, completes the join phases
 * whose rebalance deadline (or initial delay) has passed, removes members whose session ran out,
 * and every {@code offsets.retention.check.interval.ms} expires old offsets.
 */
final class GroupTimers implements AutoCloseable
{
    // under the coordinator's name, where this was logged before the coordinator was split
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

    private final Object lock;
    private final Map<String, Group> groups;
    private final GroupCoordinator.Settings settings;
    private final GroupStore store;
    private final JoinPhase joins;
    private final SyncPhase syncs;
    private final Membership members;
    private final ScheduledExecutorService timer;
    private long nextRetentionCheck;

    GroupTimers(final Object lock, final Map<String, Group> groups, final GroupCoordinator.Settings settings, final GroupStore store,
        final JoinPhase joins, final SyncPhase syncs, final Membership members)
    {
        this.lock = lock;
        this.groups = groups;
        this.settings = settings;
        this.store = store;
        this.joins = joins;
        this.syncs = syncs;
        this.members = members;
        this.timer = Executors.newSingleThreadScheduledExecutor(r ->
        {
            final Thread t = new Thread(r, "ferrite-group-coordinator");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the timer (called under the coordinator's lock). */
    void start(final long now)
    {
        nextRetentionCheck = now + settings.retentionCheckIntervalMs();
        timer.scheduleWithFixedDelay(this::tick, 50, 50, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close()
    {
        timer.shutdownNow();
    }

    private void tick()
    {
        synchronized (lock)
        {
            try
            {
                store.drain(); // answers no network thread applied yet (a write nobody waits for: expiry's)
                check(System.currentTimeMillis());
            }
            catch (final RuntimeException ex)
            {
                LOG.error("group coordinator timer failed", ex);
            }
        }
    }

    /** Session expiries, rebalance deadlines, the initial delay, and now and then offset retention. */
    private void check(final long now)
    {
        for (final Group group : new ArrayList<>(groups.values()))
        {
            group.pendingMembers.values().removeIf(deadline -> deadline < now);
            if (group.is(Group.State.PREPARING_REBALANCE))
            {
                if (now >= group.rebalanceDeadline && group.initialDelayUntil <= now)
                {
                    joins.completeJoin(group, now);
                    continue;
                }
                joins.tryCompleteJoin(group, now);
            }
            syncs.expireAssignmentWrite(group, now);
            for (final Member m : new ArrayList<>(group.members.values()))
            {
                if (m.awaitingJoin == null && m.awaitingSync == null && now > m.sessionDeadline &&
                    group.members.containsKey(m.memberId))
                {
                    LOG.info("member {} of group {} expired after {} ms without a heartbeat", m.memberId, group.groupId,
                        m.sessionTimeoutMs);
                    members.removeMember(group, m, now);
                }
            }
        }
        if (now >= nextRetentionCheck)
        {
            nextRetentionCheck = now + settings.retentionCheckIntervalMs();
            GroupDeletions.expireOffsets(groups, store, settings.offsetsRetentionMs(), now);
        }
    }
}
