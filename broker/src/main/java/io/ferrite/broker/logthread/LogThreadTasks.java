package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.WriterTasks;

/**
 * The log manager's writer-only work (the producer-id expiry) handed to the log thread that owns the
 * partition ({@link Partition#owner}), which runs it between appends ({@link LogThread#execute}). Made
 * before the logs open, attached once the topics and log threads exist; a task handed before that, for
 * a log no topic has any more (deleted meanwhile), or for a log thread that has stopped, is dropped: the
 * next check hands it again.
 */
public final class LogThreadTasks implements WriterTasks
{
    private volatile TopicRegistry topics;
    private volatile LogThread[] logThreads;

    public void attach(final TopicRegistry topics, final LogThread[] logThreads)
    {
        this.logThreads = logThreads;
        this.topics = topics;
    }

    @Override
    public void execute(final PartitionLog log, final Runnable task)
    {
        final TopicRegistry registry = topics;
        if (registry == null)
        {
            return;
        }
        final Topic topic = registry.topic(log.topic());
        final Partition partition = topic == null ? null : topic.partition(log.partition());
        final LogThread owner = partition != null && partition.log == log ? logThreads[partition.owner] : null;
        if (owner != null && !owner.stopped()) // a stopped thread never runs its tasks: they would only pile up
        {
            owner.execute(task);
        }
    }
}
