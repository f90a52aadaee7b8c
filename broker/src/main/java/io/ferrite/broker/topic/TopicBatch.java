package io.ferrite.broker.topic;

import io.ferrite.log.CreatedLogs;
import io.ferrite.log.NewLogs;
import io.ferrite.log.PartitionLog;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Several topics created at once by the {@link TopicRegistry}'s writer (a CreateTopics' small topics): their partition
 * logs made as one batch of the log manager's ({@code LogManager.createLogs(List, Runnable)}: the files of all written
 * and fsynced together, then their directories, then each log directory once — a few rounds of fsyncs for the batch, not
 * a few per topic), each topic all or nothing, and each made one published ({@link TopicRegistry#create} is a batch of one).
 */
public final class TopicBatch
{
    /** A topic to create: its name, partition count, config overrides and id (the creation journal's). */
    public record NewTopic(String name, int partitions, Map<String, String> overrides, long[] id)
    {
    }

    /** What became of each topic of a batch, told in the batch's order, each once. */
    public interface Outcomes
    {
        /** Topic {@code index} of the batch is made and published. */
        void created(int index, Topic topic);

        /** Topic {@code index} of the batch was refused or its files failed: none of them is left. */
        void failed(int index, Exception cause);
    }

    private TopicBatch()
    {
    }

    /**
     * Creates every topic of {@code batch} in {@code registry} (on its writer), telling {@code outcomes} of each in the
     * batch's order as it is published, so that what a caller does for one (a failed one published offline) comes in
     * its turn; {@code beforeEach} runs before each topic is taken up. A name taken (IllegalArgumentException) or an
     * invalid config (ConfigException) fails that topic alone, before the disk is touched.
     */
    public static void create(final TopicRegistry registry, final List<NewTopic> batch, final Runnable beforeEach,
        final Outcomes outcomes)
    {
        final Exception[] refused = new Exception[batch.size()];
        final List<NewLogs> entries = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++)
        {
            final NewTopic t = batch.get(i);
            try
            {
                registry.checkNew(t.name(), t.overrides()); // before the disk is touched
                entries.add(new NewLogs(t.name(), 0, t.partitions(), t.overrides(), (dir, p) -> TopicIds.writeNew(dir, t.id())));
            }
            catch (final RuntimeException ex)
            {
                refused[i] = ex;
            }
        }
        final CreatedLogs made = registry.logs().createLogs(entries, beforeEach);
        int entry = 0;
        for (int i = 0; i < batch.size(); i++)
        {
            if (refused[i] != null)
            {
                outcomes.failed(i, refused[i]);
                continue;
            }
            final PartitionLog[] logs = made.made(entry);
            final Exception failure = made.failure(entry++);
            if (logs == null)
            {
                outcomes.failed(i, failure);
                continue;
            }
            outcomes.created(i, published(registry, batch.get(i).name(), batch.get(i).id(), logs, batch.get(i).overrides()));
        }
    }

    /** {@link #create} of one topic, published and returned; its failure thrown (an IOException or an unchecked one). */
    static Topic createOne(final TopicRegistry registry, final NewTopic topic) throws java.io.IOException
    {
        final Topic[] created = new Topic[1];
        final Exception[] failed = new Exception[1];
        create(registry, List.of(topic), () -> { }, new Outcomes()
        {
            @Override
            public void created(final int index, final Topic t)
            {
                created[0] = t;
            }

            @Override
            public void failed(final int index, final Exception cause)
            {
                failed[0] = cause;
            }
        });
        if (failed[0] instanceof java.io.IOException io)
        {
            throw io;
        }
        if (failed[0] instanceof RuntimeException unchecked)
        {
            throw unchecked;
        }
        if (failed[0] != null)
        {
            throw new java.io.IOException(failed[0]);
        }
        return created[0];
    }

    /** The writer: new topic {@code name} of id {@code id} published in {@code registry} with the logs made of its partitions. */
    private static Topic published(final TopicRegistry registry, final String name, final long[] id, final PartitionLog[] made,
        final Map<String, String> overrides)
    {
        assert registry.isWriter() : Thread.currentThread() + " creates a topic, which is not its registry's writer";
        final Partition[] created = new Partition[made.length];
        for (int p = 0; p < made.length; p++)
        {
            created[p] = new Partition(name, p, made[p], registry.owner(name, p));
        }
        final Topic topic = new Topic(name, id[0], id[1], created, overrides);
        registry.publish(topic, null);
        return topic;
    }
}
