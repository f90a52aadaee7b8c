package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real broker standing in for another node of a cluster, for the tests of what the transaction coordinator and a
 * partition leader send to other nodes ({@code MarkerBatchesTest}, {@code VerifyBatchesTest}, {@code
 * RemoteVerifierRetryTest}): the broker with a topic, its Admin, a {@link GatedProxy} in front of it, kafka-clients
 * transactions left open on it, and whatever else the test registers ({@link #closing}), all closed with it, the
 * registered ones first (last registered first).
 */
final class ProxiedBroker implements AutoCloseable
{
    /** A transaction: its id, producer id and epoch. */
    record Open(String id, long producerId, short epoch)
    {
    }

    /** A verifier standing for this node's own coordinator, never to be asked: every id's coordinator is elsewhere. */
    static final TxnVerifier NOT_HERE = (id, pid, epoch, topics, partitions, count, add, waker) ->
    {
        throw new AssertionError("the local coordinator asked about " + id);
    };

    final RunningBroker broker;
    final Admin admin;
    final GatedProxy proxy;
    final String topic;
    private final int partitions;
    private final Deque<AutoCloseable> closing = new ArrayDeque<>();

    private ProxiedBroker(final RunningBroker broker, final String topic, final int partitions) throws IOException
    {
        this.broker = broker;
        this.topic = topic;
        this.partitions = partitions;
        Admin made = null;
        try
        {
            made = broker.admin();
            this.proxy = new GatedProxy(port());
        }
        catch (final IOException | RuntimeException ex)
        {
            if (made != null)
            {
                made.close();
            }
            broker.close();
            throw ex;
        }
        this.admin = made;
    }

    /** A broker in {@code dir} with {@code overrides}, and topic {@code topic} of {@code partitions} partitions made on it. */
    static ProxiedBroker start(final Path dir, final String topic, final int partitions, final Map<String, String> overrides)
        throws Exception
    {
        final ProxiedBroker node = new ProxiedBroker(new RunningBroker(dir, overrides), topic, partitions);
        try
        {
            node.admin.createTopics(List.of(new NewTopic(topic, partitions, (short)1))).all().get(30, TimeUnit.SECONDS);
            return node;
        }
        catch (final Exception ex)
        {
            node.close();
            throw ex;
        }
    }

    /** The broker's own port (not the proxy's). */
    int port()
    {
        return Integer.parseInt(broker.bootstrap().split(":")[1]);
    }

    /** This node as the transactional ids' coordinator, reached through the proxy (node id 7). */
    PartitionOwnership.Located behindProxy()
    {
        return new PartitionOwnership.Located(Errors.NONE, 7, "127.0.0.1", proxy.port());
    }

    /** This node as the transactional ids' coordinator, reached directly (node id 7). */
    PartitionOwnership.Located direct()
    {
        return new PartitionOwnership.Located(Errors.NONE, 7, "127.0.0.1", port());
    }

    /** {@code c}, closed with this node before it. */
    <T extends AutoCloseable> T closing(final T c)
    {
        closing.push(c);
        return c;
    }

    /** A kafka-clients transactional producer of {@code id} on this node, initialised; closed with it. */
    KafkaProducer<String, String> producer(final String id)
    {
        final KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrap(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, id), new StringSerializer(), new StringSerializer());
        closing(() -> producer.close(Duration.ofSeconds(5)));
        producer.initTransactions();
        return producer;
    }

    /** A new producer's transaction of {@code id} left open with record {@code id/p} on every partition p of the topic. */
    Open openTransaction(final String id) throws Exception
    {
        return openTransaction(id, partitions);
    }

    /** As {@link #openTransaction(String)}, on the topic's first {@code written} partitions only. */
    Open openTransaction(final String id, final int written) throws Exception
    {
        final KafkaProducer<String, String> producer = producer(id);
        producer.beginTransaction();
        for (int p = 0; p < written; p++)
        {
            producer.send(new ProducerRecord<>(topic, p, "k", id + "/" + p)).get(30, TimeUnit.SECONDS);
        }
        return describe(id);
    }

    /** {@code id}'s producer id and epoch as its coordinator has them now. */
    Open describe(final String id) throws Exception
    {
        final TransactionDescription d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
        return new Open(id, d.producerId(), (short)d.producerEpoch());
    }

    /** Waits until the proxy has read {@code requests} request frames. */
    void awaitAtProxy(final int requests, final String what)
    {
        Await.await(() -> proxy.requests() == requests, Duration.ofSeconds(30), () -> what + ": " + proxy.requests() + " requests at the proxy");
    }

    /** The requests of {@code api} this node received since it started (its request metrics). */
    long received(final ApiKeys api) throws IOException
    {
        return RequestCounts.of(broker.dir, api.id);
    }

    @Override
    public void close() throws Exception
    {
        Exception first = null;
        for (AutoCloseable c; (c = closing.poll()) != null; )
        {
            try
            {
                c.close();
            }
            catch (final Exception ex)
            {
                if (first == null)
                {
                    first = ex;
                }
            }
        }
        try
        {
            proxy.close();
            admin.close();
        }
        finally
        {
            broker.close();
        }
        if (first != null)
        {
            throw first;
        }
    }
}
