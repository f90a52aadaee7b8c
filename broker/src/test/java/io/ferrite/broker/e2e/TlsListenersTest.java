package io.ferrite.broker.e2e;

import io.ferrite.broker.ClosedByBroker;
import io.ferrite.broker.TestCertificates;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS listeners with Kafka 4.4's settings (issue 18): one broker with one network thread (so every connection below
 * shares the thread that a refused one is on) and four listeners — SSL, SASL_SSL (PLAIN from the listener's JAAS text,
 * SCRAM-SHA-512 made with Admin), MTLS (an SSL listener that takes the broker-wide {@code ssl.client.auth=required}, which
 * SSL overrides with none and SASL_SSL, as in Kafka 4.4, does not take: its clients have no key store) and PLAINTEXT — driven by kafka-clients 4.4 and kcat (librdkafka 2.0.2); the stores made by keytool
 * ({@link TestCertificates}). The refusals are those kafka-clients 4.4 raises (not compared with a live Kafka 4.4 broker).
 */
class TlsListenersTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception
    {
        certs = TestCertificates.shared();
        java.nio.file.Files.createDirectories(dir.resolve("logs"));
        final Map<String, String> config = new HashMap<>();
        config.put("listeners", "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0,PLAINTEXT://127.0.0.1:0");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,MTLS:SSL");
        config.put("ssl.keystore.type", "PKCS12");
        config.put("ssl.keystore.location", certs.store("broker").toString());
        config.put("ssl.keystore.password", TestCertificates.PASSWORD);
        config.put("ssl.key.password", TestCertificates.PASSWORD);
        config.put("ssl.truststore.type", "PKCS12");
        config.put("ssl.truststore.location", certs.store("broker-trust").toString());
        config.put("ssl.truststore.password", TestCertificates.PASSWORD);
        // broker-wide: MTLS takes it, SSL overrides it, and SASL_SSL does not take it (Kafka 4.4's rule, KIP-684)
        config.put("ssl.client.auth", "required");
        config.put("listener.name.ssl.ssl.client.auth", "none");
        config.put("listener.name.mtls.ssl.keystore.password", TestCertificates.PASSWORD); // a per-listener password too
        config.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512");
        config.put("listener.name.sasl_ssl.plain.sasl.jaas.config", JAAS);
        config.put("connection.failed.authentication.delay.ms", "100");
        config.put("num.network.threads", "1");
        broker = new RunningBroker(dir.resolve("logs"), config);
    }

    @AfterAll
    static void stop() throws IOException
    {
        if (broker != null)
        {
            broker.close();
        }
    }

    static int port(final String listener) throws IOException
    {
        return broker.broker.address(listener).getPort();
    }

    /** A client of {@code listener} that trusts the broker's certificate (a PEM trust store, as Kafka reads one). */
    static Map<String, Object> ssl(final String listener, final String protocol) throws IOException
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port(listener));
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
        c.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        c.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.brokerPem().toString());
        return c;
    }

    /** A client with the key store {@code store} (its certificate offered to the broker). */
    static Map<String, Object> withKey(final Map<String, Object> c, final String store)
    {
        c.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PKCS12");
        c.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, certs.store(store).toString());
        c.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, TestCertificates.PASSWORD);
        c.put(SslConfigs.SSL_KEY_PASSWORD_CONFIG, TestCertificates.PASSWORD);
        return c;
    }

    static Map<String, Object> saslSsl(final String mechanism, final String module, final String user, final String password) throws IOException
    {
        final Map<String, Object> c = ssl("SASL_SSL", "SASL_SSL");
        c.put(SaslConfigs.SASL_MECHANISM, mechanism);
        c.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + user + "\" password=\"" + password + "\";");
        return c;
    }

    static Map<String, Object> plainSsl(final String user, final String password) throws IOException
    {
        return saslSsl("PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule", user, password);
    }

    private static void produce(final Map<String, Object> client, final String topic, final String prefix, final int count) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(client))
        {
            for (int i = 0; i < count; i++)
            {
                producer.send(new ProducerRecord<>(topic, (prefix + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Every record of partition 0 of {@code topic}, read from the start by a consumer of {@code client}. */
    private static List<String> consume(final Map<String, Object> client, final String topic)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(client))
        {
            return SaslPlainTest.readAll(consumer, List.of(new TopicPartition(topic, 0)));
        }
    }

    private static void createTopic(final Map<String, Object> client, final String topic) throws Exception
    {
        try (Admin admin = Admin.create(SaslPlainTest.withTimeouts(client)))
        {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            assertEquals(Integer.parseInt(client.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG).toString().split(":")[1]),
                admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().port(), "told its own listener's endpoint");
        }
        await(() -> broker.broker.topics().topic(topic) != null, Duration.ofSeconds(30), "topic published");
    }

    @Test
    void adminProducerAndConsumerOverSsl() throws Exception
    {
        createTopic(ssl("SSL", "SSL"), "over-ssl");
        produce(ssl("SSL", "SSL"), "over-ssl", "ssl-", 20);
        // a fetch of more than the inline bound goes from the segment file through the engine (no transferTo on TLS)
        final StringBuilder big = new StringBuilder();
        while (big.length() < 200_000)
        {
            big.append("large-record-");
        }
        produce(ssl("SSL", "SSL"), "over-ssl", big.toString(), 3);
        final List<String> read = consume(ssl("SSL", "SSL"), "over-ssl");
        assertEquals(23, read.size());
        assertEquals("ssl-0", read.get(0));
        assertEquals(big + "2", read.get(22));
        assertEquals(read, consume(new HashMap<>(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port("PLAINTEXT"))),
            "over-ssl"), "the same records on the PLAINTEXT listener");
    }

    @Test
    void describeConfigsHidesTheStorePasswords() throws Exception
    {
        try (Admin admin = Admin.create(SaslPlainTest.withTimeouts(ssl("SSL", "SSL"))))
        {
            final String id = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().idString();
            final ConfigResource self = new ConfigResource(ConfigResource.Type.BROKER, id);
            final Config config = admin.describeConfigs(List.of(self)).all().get(30, TimeUnit.SECONDS).get(self);
            for (final String name : List.of("ssl.keystore.password", "ssl.key.password", "ssl.truststore.password",
                "listener.name.mtls.ssl.keystore.password"))
            {
                final ConfigEntry entry = config.get(name);
                assertNotNull(entry, name + " is listed");
                assertTrue(entry.isSensitive(), name + " is sensitive");
                assertNull(entry.value(), name + "'s value is hidden");
            }
            assertTrue(config.entries().stream().noneMatch(e -> TestCertificates.PASSWORD.equals(e.value())), "no entry shows a password");
        }
    }

    @Test
    void saslSslWithPlainAndScramSha512() throws Exception
    {
        createTopic(plainSsl("alice", "alice-secret"), "over-sasl-ssl");
        try (Admin admin = Admin.create(SaslPlainTest.withTimeouts(plainSsl("alice", "alice-secret"))))
        {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "carol-secret"))).all().get(30, TimeUnit.SECONDS);
        }
        final Map<String, Object> scram = saslSsl("SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule", "carol",
            "carol-secret");
        produce(plainSsl("alice", "alice-secret"), "over-sasl-ssl", "plain-", 5);
        produce(scram, "over-sasl-ssl", "scram-", 5);
        final List<String> read = consume(scram, "over-sasl-ssl");
        assertEquals(List.of("plain-0", "plain-1", "plain-2", "plain-3", "plain-4", "scram-0", "scram-1", "scram-2", "scram-3", "scram-4"), read);
        // a wrong password over TLS: Kafka's SASL refusal, as on SASL_PLAINTEXT
        try (Admin admin = Admin.create(SaslPlainTest.withTimeouts(plainSsl("alice", "wrong"))))
        {
            final ExecutionException ex = assertThrows(ExecutionException.class, () -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS));
            assertInstanceOf(org.apache.kafka.common.errors.SaslAuthenticationException.class, ex.getCause());
            assertEquals("Authentication failed: Invalid username or password", ex.getCause().getMessage());
        }
    }

    @Test
    void mutualTlsServesATrustedClientCertificate() throws Exception
    {
        final Map<String, Object> client = withKey(ssl("MTLS", "SSL"), "client");
        createTopic(client, "over-mtls");
        produce(client, "over-mtls", "mtls-", 5);
        assertEquals(List.of("mtls-0", "mtls-1", "mtls-2", "mtls-3", "mtls-4"), consume(withKey(ssl("MTLS", "SSL"), "client"), "over-mtls"));
    }

    /**
     * What kafka-clients raises against a Kafka 4.4 broker: a client that does not trust the broker's certificate, and
     * clients whose certificate the broker does not trust (none, another's, an expired one) on a listener that requires
     * one, fail with SslAuthenticationException; meanwhile a producer on the same (only) network thread goes on.
     */
    @Test
    void untrustedCertificatesOnEitherSideAreRefusedWithSslAuthenticationException() throws Exception
    {
        createTopic(ssl("SSL", "SSL"), "refusals");
        try (KafkaProducer<byte[], byte[]> healthy = broker.producer(ssl("SSL", "SSL")))
        {
            healthy.send(new ProducerRecord<>("refusals", "before".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            final Map<String, Object> distrustful = ssl("SSL", "SSL");
            distrustful.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.dir.resolve("ca.pem").toString()); // not the broker's issuer
            final List<Map<String, Object>> refused = List.of(distrustful, ssl("MTLS", "SSL"), withKey(ssl("MTLS", "SSL"), "stranger"),
                withKey(ssl("MTLS", "SSL"), "expired"));
            for (final Map<String, Object> client : refused)
            {
                try (Admin admin = Admin.create(SaslPlainTest.withTimeouts(client)))
                {
                    final ExecutionException ex = assertThrows(ExecutionException.class,
                        () -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS), client.toString());
                    assertInstanceOf(SslAuthenticationException.class, ex.getCause(), client.toString());
                }
            }
            healthy.send(new ProducerRecord<>("refusals", "after".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * Bytes that are not TLS on a TLS port cost only their connection: a Kafka request in plaintext, random garbage, a
     * handshake cut off (closed, or left open), while a producer on the same network thread goes on.
     */
    @Test
    void plaintextGarbageAndTruncatedHandshakesCostOnlyTheirConnection() throws Exception
    {
        createTopic(ssl("SSL", "SSL"), "hostile");
        final Random random = new Random(18);
        try (KafkaProducer<byte[], byte[]> healthy = broker.producer(ssl("SSL", "SSL")))
        {
            healthy.send(new ProducerRecord<>("hostile", "before".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            final List<Socket> open = new ArrayList<>();
            for (int i = 0; i < 20; i++)
            {
                final Socket socket = new Socket("127.0.0.1", port("SSL"));
                socket.setSoTimeout(20_000);
                final byte[] bytes = new byte[6 + random.nextInt(3000)];
                random.nextBytes(bytes);
                if (i % 2 == 0)
                {
                    bytes[0] = 0; // a Kafka frame's size starts so: what a plaintext client sends
                }
                else
                {
                    // a whole handshake record of garbage: its header, then as many bytes as it declares
                    bytes[0] = 0x16;
                    bytes[1] = 3;
                    bytes[2] = 3;
                    bytes[3] = (byte)((bytes.length - 5) >> 8);
                    bytes[4] = (byte)(bytes.length - 5);
                }
                socket.getOutputStream().write(bytes);
                ClosedByBroker.assertClosedByBroker(socket, 64); // at most a TLS alert before the close
                socket.close();
            }
            // a Kafka request in plaintext: closed, at most an alert back
            try (Socket socket = new Socket("127.0.0.1", port("SSL")))
            {
                socket.setSoTimeout(20_000);
                final java.nio.ByteBuffer request = RawClient.frame(org.apache.kafka.common.protocol.ApiKeys.API_VERSIONS, (short)3,
                    new org.apache.kafka.common.message.ApiVersionsRequestData(), 1);
                socket.getOutputStream().write(request.array(), request.arrayOffset(), request.limit());
                ClosedByBroker.assertClosedByBroker(socket, 64); // at most a TLS alert before the close
            }
            // a truncated ClientHello: the first bytes of a real one, then nothing (left open) or the end of the stream
            for (int i = 0; i < 2; i++)
            {
                final Socket socket = new Socket("127.0.0.1", port("SSL"));
                final OutputStream out = socket.getOutputStream();
                out.write(new byte[] {0x16, 3, 1, 0, (byte)200, 1, 0, 0, (byte)196, 3, 3});
                out.flush();
                if (i == 0)
                {
                    socket.shutdownOutput();
                    socket.setSoTimeout(20_000);
                    ClosedByBroker.assertClosedByBroker(socket, 64); // at most a TLS alert before the close
                    socket.close();
                }
                else
                {
                    open.add(socket);
                }
            }
            healthy.send(new ProducerRecord<>("hostile", "after".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            for (final Socket socket : open)
            {
                socket.close();
            }
        }
        assertEquals(List.of("before", "after"), consume(ssl("SSL", "SSL"), "hostile"));
    }

    @Test
    void kcatOverSslAndSaslSslPlain() throws Exception
    {
        createTopic(ssl("SSL", "SSL"), "kcat-tls");
        final String ca = certs.brokerPem().toString();
        final String[] ssl = {"-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + ca};
        final String[] saslSsl = {"-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + ca, "-X", "sasl.mechanisms=PLAIN",
            "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"};
        SaslPlainTest.kcat("k0:v0\nk1:v1\n", SaslPlainTest.concat(
            new String[] {"kcat", "-b", "127.0.0.1:" + port("SSL"), "-P", "-t", "kcat-tls", "-K:"}, ssl));
        SaslPlainTest.kcat("k2:v2\n", SaslPlainTest.concat(
            new String[] {"kcat", "-b", "127.0.0.1:" + port("SASL_SSL"), "-P", "-t", "kcat-tls", "-K:"}, saslSsl));
        for (final String[] c : List.of(new String[] {"SSL"}, new String[] {"SASL_SSL"}))
        {
            final String[] auth = c[0].equals("SSL") ? ssl : saslSsl;
            final String consumed = SaslPlainTest.kcat(null, SaslPlainTest.concat(
                new String[] {"kcat", "-b", "127.0.0.1:" + port(c[0]), "-C", "-t", "kcat-tls", "-e", "-f", "%k=%s\\n"}, auth));
            final List<String> lines = new ArrayList<>();
            for (final String line : consumed.strip().split("\n"))
            {
                if (!line.startsWith("% "))
                {
                    lines.add(line);
                }
            }
            assertEquals(List.of("k0=v0", "k1=v1", "k2=v2"), lines, c[0] + ": " + consumed);
        }
    }
}
