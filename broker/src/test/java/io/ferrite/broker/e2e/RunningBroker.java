package io.ferrite.broker.e2e;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.TestInternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A broker started in-process on an ephemeral loopback port, and kafka-clients pointed at it. */
final class RunningBroker implements AutoCloseable
{
    final Path dir;
    final Map<String, String> overrides;
    /** The coordinators' clock, moved by the test; null: the system clocks. */
    private final SteppedClock clock;
    Broker broker;

    RunningBroker(final Path dir, final Map<String, String> overrides) throws IOException
    {
        this(dir, overrides, null);
    }

    /** With the coordinators on {@code clock} (null: the system clocks), which the test steps past their timeouts. */
    RunningBroker(final Path dir, final Map<String, String> overrides, final SteppedClock clock) throws IOException
    {
        this.dir = dir;
        this.overrides = overrides;
        this.clock = clock;
        start();
    }

    void start() throws IOException
    {
        final Map<String, String> values = new HashMap<>();
        values.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0");
        values.put(BrokerConfig.LOG_DIR, dir.toString());
        values.put(BrokerConfig.NUM_NETWORK_THREADS, "2");
        values.put(BrokerConfig.LOG_THREADS, "2");
        // a first member's join is answered at once, not after Kafka's 3 s wait for others (Kafka's own test brokers
        // set 0 too); a test of that wait, or of several members gathered into one generation, sets its own
        values.put(BrokerConfig.GROUP_INITIAL_REBALANCE_DELAY_MS, "0");
        values.putAll(overrides);
        // __consumer_offsets and __transaction_state of 5 partitions each, not 50, unless the test sets its own
        final BrokerConfig config = BrokerConfig.of(TestInternalTopics.withTestCounts(values));
        broker = clock == null ? Broker.start(config) : Broker.start(config, clock.coordinatorClock());
    }

    /**
     * Holds log thread {@code owner} in a task until {@code release} opens (at most a minute): what
     * that thread did not do yet is then certain, not a matter of timing. Returns once it is held.
     */
    void holdLogThread(final int owner, final CountDownLatch release) throws InterruptedException
    {
        final CountDownLatch held = new CountDownLatch(1);
        broker.executeOnOwner(owner, () ->
        {
            held.countDown();
            try
            {
                release.await(60, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        if (!held.await(20, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("log thread " + owner + " never ran the holding task");
        }
    }

    void restart() throws IOException
    {
        broker.close();
        start();
    }

    String bootstrap()
    {
        return "127.0.0.1:" + broker.address().getPort();
    }

    /**
     * An Admin whose createTopics returns once the topics it created are published in this broker's registry: a
     * CreateTopics is answered once journaled, its partitions' files made and the topic published by the admin agent
     * just after (as Kafka's broker makes a topic's logs after its controller answered), and the tests that read the
     * broker's internals or send raw requests right after a creation wait for that, as a Kafka test waits for the
     * topic in the metadata. A creation that failed, or validateOnly, returns at once; a creation's own answer (ids,
     * errors) is the result's, unchanged. {@link #plainAdmin} for the client as it is.
     */
    Admin admin()
    {
        return new org.apache.kafka.clients.admin.ForwardingAdmin(adminConfig())
        {
            @Override
            public org.apache.kafka.clients.admin.CreateTopicsResult createTopics(
                final java.util.Collection<org.apache.kafka.clients.admin.NewTopic> topics)
            {
                return createTopics(topics, new org.apache.kafka.clients.admin.CreateTopicsOptions());
            }

            @Override
            public org.apache.kafka.clients.admin.CreateTopicsResult createTopics(
                final java.util.Collection<org.apache.kafka.clients.admin.NewTopic> topics,
                final org.apache.kafka.clients.admin.CreateTopicsOptions options)
            {
                final org.apache.kafka.clients.admin.CreateTopicsResult result = super.createTopics(topics, options);
                if (!options.shouldValidateOnly())
                {
                    for (final org.apache.kafka.clients.admin.NewTopic topic : topics)
                    {
                        awaitPublished(result, topic.name());
                    }
                }
                return result;
            }
        };
    }

    /** The client as it is: its createTopics returns before the answer. */
    Admin plainAdmin()
    {
        return Admin.create(adminConfig());
    }

    private Map<String, Object> adminConfig()
    {
        return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000", AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    }

    /** Once {@code name}'s creation in {@code result} answered NONE, waits until the broker published the topic. */
    private void awaitPublished(final org.apache.kafka.clients.admin.CreateTopicsResult result, final String name)
    {
        try
        {
            result.values().get(name).get(30, TimeUnit.SECONDS);
        }
        catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return; // not created: the caller sees why in the result
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return;
        }
        io.ferrite.testing.Await.await(() -> broker.topics().topic(name) != null, java.time.Duration.ofSeconds(30),
            "topic " + name + ", answered as created, published by the admin agent");
    }

    KafkaProducer<byte[], byte[]> producer(final Map<String, Object> extra)
    {
        final Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    KafkaConsumer<byte[], byte[]> consumer(final Map<String, Object> extra)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.putAll(extra);
        return new KafkaConsumer<>(c);
    }

    @Override
    public void close() throws IOException
    {
        broker.close();
    }
}
