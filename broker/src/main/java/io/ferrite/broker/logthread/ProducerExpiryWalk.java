package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;

import java.util.List;

/**
 * One log thread's producer-id expiry ({@link io.ferrite.log.LogTransactions#removeExpiredProducers}):
 * the scheduler's thread flags it due once per check interval ({@link #due()}), and the log thread's duty
 * cycle walks the partitions it owns a few at a time ({@link #doWork()}), between its command drains, so a
 * check never stalls produce for the whole walk. A flag rather than a queued task: a check that comes
 * while one is still walking (a small interval, a busy thread) is absorbed instead of piling up, and
 * nothing is allocated per partition. The walk goes over the registry's topic list as it was when it
 * began (an immutable snapshot: a topic created meanwhile waits for the next check, one deleted
 * meanwhile is skipped, and its closed log would do nothing anyway).
 *
 * <p>{@link #due()} from any thread; everything else on the log thread.
 */
final class ProducerExpiryWalk
{
    /**
     * Partitions of this thread expired per duty cycle. An expiry is a scan of the log's producer map
     * (and of its verifications): some microseconds with a few hundred producers, so 16 keep a cycle's
     * extra latency well under a millisecond, and a thread with 10 000 partitions is through in ~600 cycles.
     */
    static final int EXPIRE_PER_CYCLE = 16;
    /** Partitions looked at per duty cycle: another thread's, or one without producer state, costs a few loads. */
    static final int EXAMINE_PER_CYCLE = 512;

    private final int logThread;
    private final TopicRegistry topics;
    private volatile boolean due;
    /** The walk under way: the topic list it goes over (null: none under way), the topic and partition it is at. */
    private List<Topic> walking;
    private int topicIndex;
    private int partitionIndex;

    ProducerExpiryWalk(final int logThread, final TopicRegistry topics)
    {
        this.logThread = logThread;
        this.topics = topics;
    }

    /** Any thread: a check is due; the log thread starts a walk at its next duty cycle unless one is under way. */
    void due()
    {
        due = true;
    }

    /** Whether there is work: a walk due or under way (the log thread's idle check). */
    boolean hasWork()
    {
        return walking != null || due;
    }

    /**
     * Log thread, each duty cycle: runs the expiry of at most {@value #EXPIRE_PER_CYCLE} of its logs that remember a
     * producer (one that remembers none is only looked at); returns how many partitions it looked at.
     */
    int doWork()
    {
        if (walking == null)
        {
            if (!due)
            {
                return 0;
            }
            due = false;
            walking = topics.topics() instanceof List<Topic> list ? list : List.copyOf(topics.topics());
            topicIndex = 0;
            partitionIndex = 0;
        }
        int examined = 0;
        int expired = 0;
        while (examined < EXAMINE_PER_CYCLE && expired < EXPIRE_PER_CYCLE)
        {
            if (topicIndex >= walking.size())
            {
                walking = null;
                break;
            }
            final Topic topic = walking.get(topicIndex);
            if (partitionIndex >= topic.partitions.length || topic.isDeleted())
            {
                topicIndex++;
                partitionIndex = 0;
                continue;
            }
            final Partition partition = topic.partitions[partitionIndex++];
            examined++;
            if (partition != null && partition.owner == logThread && partition.log.transactions().hasProducerState())
            {
                partition.log.transactions().removeExpiredProducers(); // a log closed meanwhile does nothing
                expired++;
            }
        }
        return examined;
    }
}
