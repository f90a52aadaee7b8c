package io.ferrite.broker.e2e;

import io.ferrite.broker.TestCertificates;
import io.ferrite.broker.net.NetworkStats;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.SaslScramTest.setCredential;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kafka-clients 4.4 across re-authentications (KIP-368): with {@code connections.max.reauth.ms=3000} two producers and
 * two consumers — PLAIN over SASL_PLAINTEXT, SCRAM-SHA-512 over SASL_SSL, and the other way round — run for
 * {@link #RUN_MS}, each of their connections re-authenticating by itself (kafka-clients does it between requests, at 85 to
 * 95% of the session lifetime the broker answered) with no error, no record lost and no reconnection: the broker's one
 * network thread counts the re-authentications, and no new authentication and no ended session meanwhile.
 */
class SaslReauthenticationTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";";
    /**
     * The session lifetime: kafka-clients re-authenticate at 85-95% of it, so a request the client sends just before must
     * be read by the broker within 5% of it (150 ms) or the broker closes the connection as Kafka would: 2 s left too
     * little on a two-core machine at a load of 40 (one run saw a connection made again).
     */
    private static final long LIFETIME_MS = 3_000;
    private static final long RUN_MS = 10_000;

    @TempDir
    Path dir;

    private static Map<String, Object> client(final RunningBroker broker, final TestCertificates certs, final String protocol,
        final String mechanism, final String user, final String password) throws Exception
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.broker.address(protocol).getPort());
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
        c.put(SaslConfigs.SASL_MECHANISM, mechanism);
        final String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
            : "org.apache.kafka.common.security.scram.ScramLoginModule";
        c.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + user + "\" password=\"" + password + "\";");
        if (protocol.equals("SASL_SSL"))
        {
            c.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
            c.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.brokerPem().toString());
        }
        return c;
    }

    @Test
    void producersAndConsumersRunAcrossReauthenticationsWithNoErrorAndNoReconnection() throws Exception
    {
        final TestCertificates certs = TestCertificates.shared();
        final Map<String, String> config = new HashMap<>();
        config.put("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0");
        config.put("ssl.keystore.type", "PKCS12");
        config.put("ssl.keystore.location", certs.store("broker").toString());
        config.put("ssl.keystore.password", TestCertificates.PASSWORD);
        config.put("ssl.key.password", TestCertificates.PASSWORD);
        config.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512");
        config.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS);
        config.put("listener.name.sasl_ssl.plain.sasl.jaas.config", JAAS);
        config.put("connections.max.reauth.ms", Long.toString(LIFETIME_MS));
        config.put("num.network.threads", "1");
        try (RunningBroker broker = new RunningBroker(dir, config))
        {
            setCredential(broker, "bob", ScramMechanism.SCRAM_SHA_512, 4096, "bob-secret");
            try (Admin admin = broker.plainAdmin())
            {
                admin.createTopics(List.of(new NewTopic("reauth", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            await(() -> broker.broker.topics().topic("reauth") != null, Duration.ofSeconds(30), "topic published");
            final Map<String, Object> acksAll = Map.of(ProducerConfig.ACKS_CONFIG, "all");
            final List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
            final List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
            try
            {
                producers.add(broker.producer(with(client(broker, certs, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret"), acksAll)));
                producers.add(broker.producer(with(client(broker, certs, "SASL_SSL", "SCRAM-SHA-512", "bob", "bob-secret"), acksAll)));
                consumers.add(broker.consumer(client(broker, certs, "SASL_PLAINTEXT", "SCRAM-SHA-512", "bob", "bob-secret")));
                consumers.add(broker.consumer(client(broker, certs, "SASL_SSL", "PLAIN", "alice", "alice-secret")));
                final TopicPartition partition = new TopicPartition("reauth", 0);
                consumers.forEach(c -> c.assign(List.of(partition)));
                final List<String> sent = new ArrayList<>();
                final List<List<String>> received = List.of(new ArrayList<>(), new ArrayList<>());
                round(producers, consumers, sent, received);
                await(() -> drained(consumers, sent, received), Duration.ofSeconds(60), "every client served once");
                final NetworkStats stats = broker.broker.networkThread(0).stats();
                final long authentications = stats.saslAuthentications();
                final long reauthentications = stats.saslReauthentications();
                final long sessionsEnded = stats.saslSessionsEnded();
                final long startMs = System.currentTimeMillis();
                while (System.currentTimeMillis() - startMs < RUN_MS)
                {
                    round(producers, consumers, sent, received);
                }
                await(() -> drained(consumers, sent, received), Duration.ofSeconds(60), "every record consumed");
                final long done = stats.saslReauthentications() - reauthentications;
                System.out.println("over " + RUN_MS + " ms: " + done + " re-authentications, " + (sent.size() / 2)
                    + " records a producer, authentications " + authentications + " before, " + stats.saslAuthentications() + " after, "
                    + stats.saslSessionsEnded() + " sessions ended");
                // A request a client wrote just before its re-authentication point that reaches the broker after the
                // session's end closes the connection (as Kafka does): rare, a matter of scheduling under load (review
                // M1). What must hold is that a client connected again only after such a close, never otherwise.
                assertEquals(stats.saslSessionsEnded() - sessionsEnded, stats.saslAuthentications() - authentications,
                    "a client connected again only after the broker ended its session");
                // four clients, each with one connection in use re-authenticating every 2.55-2.85 s, at its first write after
                // that (3 or 4 times in 10 s; 13 in all measured): at least two each, whatever the machine's load
                assertTrue(done >= 4 * 2, done + " re-authentications");
                for (final List<String> r : received)
                {
                    assertEquals(sent, r, "each consumer read every record, in order");
                }
            }
            finally
            {
                producers.forEach(KafkaProducer::close);
                consumers.forEach(KafkaConsumer::close);
            }
        }
    }

    private static Map<String, Object> with(final Map<String, Object> a, final Map<String, Object> b)
    {
        final Map<String, Object> both = new HashMap<>(a);
        both.putAll(b);
        return both;
    }

    /** One record from each producer (acknowledged before the next: an error fails the test) and a poll of each consumer. */
    private static void round(final List<KafkaProducer<byte[], byte[]>> producers, final List<KafkaConsumer<byte[], byte[]>> consumers,
        final List<String> sent, final List<List<String>> received) throws Exception
    {
        for (int p = 0; p < producers.size(); p++)
        {
            final String value = p + "-" + sent.size();
            producers.get(p).send(new ProducerRecord<>("reauth", value.getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            sent.add(value);
        }
        drained(consumers, sent, received);
    }

    /** A poll of each consumer: whether each has read everything sent. */
    private static boolean drained(final List<KafkaConsumer<byte[], byte[]>> consumers, final List<String> sent,
        final List<List<String>> received)
    {
        boolean all = true;
        for (int c = 0; c < consumers.size(); c++)
        {
            for (final ConsumerRecord<byte[], byte[]> r : consumers.get(c).poll(Duration.ofMillis(50)))
            {
                received.get(c).add(new String(r.value(), StandardCharsets.UTF_8));
            }
            all &= received.get(c).size() == sent.size();
        }
        return all;
    }
}
