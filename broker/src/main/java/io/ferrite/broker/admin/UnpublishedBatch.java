package io.ferrite.broker.admin;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicBatch;
import io.ferrite.broker.topic.TopicRegistry;

import java.util.ArrayList;
import java.util.List;

/**
 * A batch of {@link PendingCreations}' unpublished topics (oldest first) made together ({@link TopicBatch}): the
 * directories, logs and files of all made and fsynced several at a time, then their directories fsynced, then the log
 * directory once — where topic after topic cost three rounds of fsyncs each (about 20 ms for 10 partitions on this
 * machine's ext4). Each topic is published, or fails, alone and in journal order; its share of the batch's time is its
 * cost ({@link CreationCost#made}).
 */
final class UnpublishedBatch
{
    private UnpublishedBatch()
    {
    }

    /**
     * Makes {@code batch} in {@code topics} (on its writer), in journal order each topic published and no longer
     * creating, or failed ({@link OfflineTopics#failed}), then handed to {@code done}; {@code beforeEach} runs before each
     * topic is taken up. An Error out of the batch fails the topics not done yet, and only them.
     */
    static void make(final TopicRegistry topics, final CreationJournal journal, final List<PendingTopic> batch,
        final Runnable beforeEach, final CreationCost cost, final java.util.function.Consumer<PendingTopic> done)
    {
        if (batch.isEmpty())
        {
            return;
        }
        final List<TopicBatch.NewTopic> specs = new ArrayList<>(batch.size());
        long partitions = 0;
        for (final PendingTopic p : batch)
        {
            specs.add(new TopicBatch.NewTopic(p.name, p.partitions, p.configs, p.id));
            partitions += p.partitions;
        }
        final boolean[] told = new boolean[batch.size()];
        final long start = System.nanoTime();
        try
        {
            TopicBatch.create(topics, specs, beforeEach, new TopicBatch.Outcomes()
            {
                @Override
                public void created(final int index, final Topic topic)
                {
                    told[index] = true;
                    batch.get(index).made = batch.get(index).partitions;
                    topics.created(topic.name); // published first: a network thread that finds it no longer creating finds it
                    done.accept(batch.get(index));
                }

                @Override
                public void failed(final int index, final Exception cause)
                {
                    told[index] = true;
                    OfflineTopics.failed(topics, journal, batch.get(index), cause);
                    done.accept(batch.get(index)); // after its publication: see OfflineTopics.filesFailed
                }
            });
        }
        catch (final Throwable ex) // one batch's Error costs the topics not made yet, not the agent
        {
            for (int i = 0; i < batch.size(); i++)
            {
                if (!told[i])
                {
                    told[i] = true;
                    OfflineTopics.failed(topics, journal, batch.get(i), ex);
                    done.accept(batch.get(i));
                }
            }
        }
        final long now = System.nanoTime();
        for (final PendingTopic p : batch)
        {
            if (p.made == p.partitions) // each its share of the batch's time: the average stays one per partition
            {
                cost.made(p.partitions, (now - start) * p.partitions / partitions, now);
            }
        }
    }
}
