package io.ferrite.broker.replica;

import io.ferrite.broker.logthread.LogThread;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * This node's follower fetchers: one {@link ReplicaFetcher} per leader broker (Kafka's
 * {@code num.replica.fetchers} = 1), each on its own thread, started with the first partition it
 * fetches and asked to stop with the last. Changes come from the partitions' log threads (the leadership
 * changes run there), under this object's monitor, and never wait for a fetcher's thread: a fetcher
 * asked to stop ends its round by itself (its connection closed, its wait for the log threads given up),
 * and is joined at {@link #close}.
 */
public final class ReplicaFetchers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetchers.class);

    private final int nodeId;
    private final LogThread[] logThreads;
    private final FetcherSettings settings;
    private final Map<Integer, Running> byLeader = new HashMap<>();
    /** Fetchers asked to end, joined at {@link #close}: a change never waits for a thread (it may run on a log thread). */
    private final List<AgentRunner> ending = new ArrayList<>();
    private boolean closed;

    private record Running(ReplicaFetcher fetcher, AgentRunner runner, InetSocketAddress address)
    {
    }

    public ReplicaFetchers(final int nodeId, final LogThread[] logThreads, final FetcherSettings settings)
    {
        this.nodeId = nodeId;
        this.logThreads = logThreads;
        this.settings = settings;
    }

    /** Fetches {@code partition} from its leader, at {@code address}. */
    public synchronized void add(final FollowedPartition partition, final InetSocketAddress address)
    {
        if (closed)
        {
            throw new IllegalStateException("the replica fetchers are closed");
        }
        Running running = byLeader.get(partition.leaderId);
        if (running != null && !running.address.equals(address))
        {
            stop(partition.leaderId, running); // the leader moved: a new connection, which its other partitions follow
            for (final FollowedPartition other : running.fetcher.partitions())
            {
                if (other != partition && !other.removed)
                {
                    moveTo(other, address);
                }
            }
            running = null;
        }
        if (running == null)
        {
            final ReplicaFetcher fetcher = new ReplicaFetcher(nodeId, partition.leaderId, address, logThreads, settings);
            // idle: nothing to fetch, or backing off; a round itself blocks in the leader's long poll
            final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(10), ex ->
            {
                if (!(ex instanceof AgentTerminationException)) // its end, asked for: Agrona hands it here too
                {
                    LOG.error("replica fetcher from {}", partition.leaderId, ex);
                }
            }, null, fetcher);
            running = new Running(fetcher, runner, address);
            byLeader.put(partition.leaderId, running);
            fetcher.add(partition); // before the thread starts: its first round asks for it
            AgentRunner.startOnThread(runner);
            return;
        }
        running.fetcher.add(partition);
    }

    /**
     * {@code old}, fetched by a fetcher stopped because its leader's address changed, is fetched from the new
     * {@code address} (or a later one) in a fresh state (the old fetcher's thread may still be in a round with the old one, which is
     * marked removed so it appends nothing), installed on the partition's log thread if it still follows it.
     */
    private void moveTo(final FollowedPartition old, final InetSocketAddress address)
    {
        old.removed = true;
        logThreads[old.partition.owner].execute(() ->
        {
            if (old.partition.followed() != old)
            {
                return; // followed anew, or stopped, meanwhile
            }
            final FollowedPartition next = new FollowedPartition(old.partition, old.leaderId, old.leaderEpoch, old.topicIdMsb,
                old.topicIdLsb);
            old.partition.followed(next);
            synchronized (this)
            {
                final Running now = byLeader.get(old.leaderId);
                if (!closed)
                {
                    add(next, now == null ? address : now.address); // the leader's address now (a later change may have come first)
                }
            }
        });
    }

    /** Stops fetching {@code partition}; the fetcher ends with its last partition. */
    public synchronized void remove(final FollowedPartition partition)
    {
        final Running running = byLeader.get(partition.leaderId);
        if (running == null)
        {
            partition.removed = true;
            return;
        }
        if (running.fetcher.remove(partition) == 0)
        {
            stop(partition.leaderId, running);
        }
    }

    /** The fetcher from {@code leaderId}, or null (tests). */
    public synchronized ReplicaFetcher fetcher(final int leaderId)
    {
        final Running running = byLeader.get(leaderId);
        return running == null ? null : running.fetcher;
    }

    private void stop(final int leaderId, final Running running)
    {
        byLeader.remove(leaderId);
        running.fetcher.requestClose();
        ending.add(running.runner);
    }

    /** Before the log threads stop: no fetcher hands them records after this. */
    @Override
    public synchronized void close()
    {
        closed = true;
        for (final Map.Entry<Integer, Running> e : Map.copyOf(byLeader).entrySet())
        {
            stop(e.getKey(), e.getValue());
        }
        for (final AgentRunner runner : ending)
        {
            runner.close();
        }
        ending.clear();
    }
}
