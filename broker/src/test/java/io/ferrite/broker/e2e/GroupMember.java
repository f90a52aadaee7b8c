package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A kafka-clients KafkaConsumer in a group (classic protocol), polled by a thread of its own as an
 * application would, so that many members can rebalance at once. It keeps what its rebalance listener
 * was told, the records it read and its latest view of the group; anything else runs on the poll
 * thread through {@link #call}.
 */
final class GroupMember implements Members.Member, AutoCloseable
{
    enum Kind
    {
        ASSIGNED, REVOKED, LOST
    }

    /** One call of the rebalance listener. */
    record Event(Kind kind, Set<TopicPartition> partitions)
    {
    }

    private final String name;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Thread thread;
    private final ConcurrentLinkedQueue<FutureTask<?>> tasks = new ConcurrentLinkedQueue<>();
    private final List<Event> events = new ArrayList<>();
    private final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    private volatile Members.View view = Members.View.NONE;
    private volatile Throwable failure;
    private volatile boolean stopping;

    /**
     * Subscribes to the topics with group.protocol=classic, client.id = name, session.timeout.ms 30000 and
     * heartbeat.interval.ms 500 unless {@code extra} says otherwise.
     */
    GroupMember(final RunningBroker broker, final String name, final String group, final Collection<String> topics,
        final Map<String, Object> extra)
    {
        this.name = name;
        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000);
        config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        config.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 30_000);
        config.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 40_000);
        config.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        config.putAll(extra);
        consumer = broker.consumer(config);
        final List<String> subscription = List.copyOf(topics);
        thread = new Thread(() -> run(subscription), "member-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    GroupMember(final RunningBroker broker, final String name, final String group, final String topic, final Map<String, Object> extra)
    {
        this(broker, name, group, List.of(topic), extra);
    }

    private void run(final List<String> topics)
    {
        try
        {
            consumer.subscribe(topics, new ConsumerRebalanceListener()
            {
                @Override
                public void onPartitionsRevoked(final Collection<TopicPartition> partitions)
                {
                    event(Kind.REVOKED, partitions);
                }

                @Override
                public void onPartitionsAssigned(final Collection<TopicPartition> partitions)
                {
                    event(Kind.ASSIGNED, partitions);
                }

                @Override
                public void onPartitionsLost(final Collection<TopicPartition> partitions)
                {
                    event(Kind.LOST, partitions);
                }
            });
            while (!stopping)
            {
                runTasks();
                final ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(100));
                synchronized (records)
                {
                    polled.forEach(records::add);
                }
                final ConsumerGroupMetadata metadata = consumer.groupMetadata();
                view = new Members.View(metadata.generationId(), metadata.memberId(), Set.copyOf(consumer.assignment()));
            }
        }
        catch (final Throwable ex)
        {
            failure = ex;
        }
        finally
        {
            FutureTask<?> task;
            while ((task = tasks.poll()) != null)
            {
                task.cancel(false);
            }
            try
            {
                consumer.close(CloseOptions.timeout(Duration.ofSeconds(20)));
            }
            catch (final Throwable ex)
            {
                if (failure == null)
                {
                    failure = ex;
                }
            }
        }
    }

    private void event(final Kind kind, final Collection<TopicPartition> partitions)
    {
        synchronized (events)
        {
            events.add(new Event(kind, Set.copyOf(partitions)));
        }
    }

    private void runTasks()
    {
        FutureTask<?> task;
        while ((task = tasks.poll()) != null)
        {
            task.run();
        }
    }

    /** Runs the function on the poll thread (between two polls) and returns its result. */
    <T> T call(final Function<KafkaConsumer<byte[], byte[]>, T> function) throws Exception
    {
        final FutureTask<T> task = new FutureTask<>((Callable<T>)() -> function.apply(consumer));
        tasks.add(task);
        if (!thread.isAlive() && task.cancel(false))
        {
            throw new IllegalStateException(name + " is not polling any more", failure);
        }
        return task.get(60, TimeUnit.SECONDS);
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Members.View view()
    {
        return view;
    }

    @Override
    public Throwable failure()
    {
        return failure;
    }

    /** Waits until the poll loop has ended by an exception, and returns it (null if it did not within the time). */
    Throwable awaitFailure(final Duration timeout) throws InterruptedException
    {
        thread.join(timeout.toMillis());
        return failure;
    }

    /**
     * Returns once this member's client has had three heartbeat answers after this call began, and
     * has polled since. Heartbeats go one at a time, so the second of them was answered by a coordinator
     * that had already seen everything the test did before this call: had it started a rebalance, it
     * would have answered REBALANCE_IN_PROGRESS, and the poll after the third (which waits for the
     * second's handling) would have rejoined, which shows in the view and the rebalance listener. The
     * condition that makes "nothing disturbed this member" certain, in place of a sleep.
     */
    void awaitHeartbeatsAfterNow() throws Exception
    {
        awaitHeartbeatsAfterNow(List.of(this));
    }

    /**
     * {@link #awaitHeartbeatsAfterNow()} of several members at once: each one's three answers counted from this call,
     * their heartbeats going on side by side (one after the other, the wait took three heartbeat intervals a member).
     */
    static void awaitHeartbeatsAfterNow(final List<GroupMember> members) throws Exception
    {
        final double[] marks = new double[members.size()];
        for (int i = 0; i < marks.length; i++)
        {
            marks[i] = members.get(i).heartbeats();
        }
        for (int i = 0; i < marks.length; i++)
        {
            final GroupMember m = members.get(i);
            final double mark = marks[i];
            Await.await(() -> m.heartbeats() >= mark + 3, Duration.ofSeconds(30), () -> m.name + "'s third heartbeat answer after " + mark);
            m.call(c -> null); // runs before the poll after the one that began once the third answer was counted
        }
    }

    /** kafka-clients' count of heartbeat answers this consumer handled (read on its poll thread). */
    private double heartbeats() throws Exception
    {
        return call(c -> c.metrics().entrySet().stream()
            .filter(e -> e.getKey().name().equals("heartbeat-total") && e.getKey().group().equals("consumer-coordinator-metrics"))
            .mapToDouble(e -> (Double)e.getValue().metricValue()).findFirst()
            .orElseThrow(() -> new IllegalStateException("no heartbeat-total metric")));
    }

    int eventCount()
    {
        synchronized (events)
        {
            return events.size();
        }
    }

    List<Event> eventsSince(final int mark)
    {
        synchronized (events)
        {
            return List.copyOf(events.subList(mark, events.size()));
        }
    }

    List<Event> events()
    {
        return eventsSince(0);
    }

    List<ConsumerRecord<byte[], byte[]>> records()
    {
        synchronized (records)
        {
            return List.copyOf(records);
        }
    }

    /** The same as {@link #close()}, for a member stopped in the middle of a test (closing again does nothing). */
    void stop()
    {
        close();
    }

    /**
     * Stops polling (within one 100 ms poll) and closes the consumer on its thread; a dynamic member
     * sends LeaveGroup, a static one does not.
     */
    @Override
    public void close()
    {
        stopping = true;
        try
        {
            thread.join(60_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name + " interrupted while stopping", ex);
        }
        if (thread.isAlive())
        {
            throw new IllegalStateException(name + " did not stop");
        }
    }
}
