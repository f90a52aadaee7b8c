package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.WriterTasks;

/**
 * The log manager's writer-only work for the log threads. The producer-id expiry: once per check
 * interval the scheduler says it is due, and each log thread's {@link ProducerExpiryWalk} is flagged
 * and woken; the thread then walks the partitions it owns ({@link Partition#owner}) a few per duty
 * cycle between its appends. Retention's roll of an active segment ({@link #retentionRollDue}): a task
 * on the owning log thread, once per retention pass that asks (rare: a partition past its retention
 * with nothing newer). Made before the logs open, attached (before the log threads start) once the
 * topics and log threads exist; a check due before that is dropped, as is one for a thread that
 * has stopped (it never reads its flag): the next check comes an interval later.
 */
public final class LogThreadTasks implements WriterTasks
{
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LogThreadTasks.class);

    private volatile LogThread[] logThreads;
    private ProducerExpiryWalk[] walks;
    private TopicRegistry topics;

    /** Before the log threads start. */
    public void attach(final TopicRegistry topics, final LogThread[] threads)
    {
        final ProducerExpiryWalk[] made = new ProducerExpiryWalk[threads.length];
        for (int i = 0; i < threads.length; i++)
        {
            made[i] = new ProducerExpiryWalk(i, topics);
            threads[i].expiry(made[i]);
        }
        this.walks = made;
        this.topics = topics;
        this.logThreads = threads; // published last: a scheduler thread that sees it sees the walks
    }

    @Override
    public void producerExpiryDue()
    {
        final LogThread[] threads = logThreads;
        if (threads == null)
        {
            return;
        }
        for (int i = 0; i < threads.length; i++)
        {
            walks[i].due();
            threads[i].wake();
        }
    }

    /**
     * Runs the roll on the log thread that owns {@code log}'s partition (the roll is the single writer's). A log no
     * longer the registry's (its topic deleted, or an internal log) is left alone.
     */
    @Override
    public void retentionRollDue(final PartitionLog log)
    {
        final LogThread[] threads = logThreads;
        if (threads == null)
        {
            return; // before the log threads start: the next retention pass asks again
        }
        final Topic topic = topics.topic(log.topic());
        final Partition partition = topic == null ? null : topic.partition(log.partition());
        if (partition == null || partition.log != log || partition.owner < 0 || partition.owner >= threads.length)
        {
            return;
        }
        threads[partition.owner].execute(() -> roll(log));
    }

    /** On the log thread. A failure (a full disk: no new segment) leaves the log as it was; the next retention pass asks again. */
    private static void roll(final PartitionLog log)
    {
        try
        {
            log.retentionRoll().run();
        }
        catch (final java.io.IOException ex)
        {
            LOG.warn("rolling {} for retention failed", log, ex);
        }
    }
}
