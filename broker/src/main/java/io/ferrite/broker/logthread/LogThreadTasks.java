package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.WriterTasks;

/**
 * The log manager's writer-only work (the producer-id expiry) for the log threads: once per check
 * interval the scheduler says it is due, and each log thread's {@link ProducerExpiryWalk} is flagged
 * and woken; the thread then walks the partitions it owns ({@link Partition#owner}) a few per duty
 * cycle between its appends. Made before the logs open, attached (before the log threads start) once
 * the topics and log threads exist; a check due before that is dropped, as is one for a thread that
 * has stopped (it never reads its flag): the next check comes an interval later.
 */
public final class LogThreadTasks implements WriterTasks
{
    private volatile LogThread[] logThreads;
    private ProducerExpiryWalk[] walks;

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
}
