package io.ferrite.broker.e2e;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two listeners, PLAINTEXT and SASL_PLAINTEXT with PLAIN users from the listener's JAAS setting, side by side on one
 * broker (issue 18's first slice): kafka-clients 4.4 and kcat authenticate, produce and consume on the SASL one while a
 * PLAINTEXT client uses the other, each told its own listener's endpoint; wrong passwords and unknown users are refused
 * with Kafka's exception and message; what Kafka 4.4 does to a PLAINTEXT client, a raw SaslHandshake v0 and hostile
 * input on the SASL port, and that none of it touches another connection.
 */
class SaslPlainTest
{
    static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
        + "user_alice=\"alice-secret\" user_bob=\"bob \\\"quoted\\\" secret\";";

    @TempDir
    Path dir;

    static Map<String, String> saslBroker()
    {
        return Map.of("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS, "connection.failed.authentication.delay.ms", "100");
    }

    static int saslPort(final RunningBroker broker) throws IOException
    {
        return broker.broker.address("SASL_PLAINTEXT").getPort();
    }

    private static Map<String, Object> sasl(final RunningBroker broker, final String user, final String password) throws IOException
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + saslPort(broker));
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        c.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        c.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
            + user + "\" password=\"" + password.replace("\"", "\\\"") + "\";");
        return c;
    }

    @Test
    void saslAndPlaintextClientsProduceAndConsumeSideBySide() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, saslBroker()))
        {
            try (Admin admin = Admin.create(withTimeouts(sasl(broker, "alice", "alice-secret"))))
            {
                admin.createTopics(List.of(new NewTopic("secured", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                // a client is told the endpoint of the listener it came in on
                final Collection<Node> nodes = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS);
                assertEquals(saslPort(broker), nodes.iterator().next().port());
            }
            await(() -> broker.broker.topics().topic("secured") != null, Duration.ofSeconds(30), "topic published");
            try (Admin admin = broker.plainAdmin())
            {
                assertEquals(broker.broker.address().getPort(), admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().port());
            }
            // bob's password has quotes in it: the JAAS text's escapes are read as Kafka reads them
            final Map<String, Object> bob = sasl(broker, "bob", "bob \"quoted\" secret");
            bob.put(ProducerConfig.ACKS_CONFIG, "all");
            try (KafkaProducer<byte[], byte[]> secured = broker.producer(bob);
                 KafkaProducer<byte[], byte[]> plain = broker.producer(Map.of()))
            {
                for (int i = 0; i < 10; i++)
                {
                    secured.send(new ProducerRecord<>("secured", ("sasl-" + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                    plain.send(new ProducerRecord<>("secured", ("plain-" + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                }
            }
            assertEquals(20, consumeAll(broker.consumer(sasl(broker, "alice", "alice-secret"))).size());
            final List<String> plainRead = consumeAll(broker.consumer(Map.of()));
            assertEquals(20, plainRead.size());
            assertEquals("sasl-0", plainRead.get(0));
            assertEquals("plain-9", plainRead.get(19));
        }
    }

    @Test
    void wrongPasswordsAndUnknownUsersAreRefusedWithKafkasMessage() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, saslBroker()))
        {
            try (KafkaProducer<byte[], byte[]> healthy = broker.producer(sasl(broker, "alice", "alice-secret")))
            {
                healthy.send(new ProducerRecord<>("shared", "before".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                for (final String[] credentials : List.of(new String[] {"alice", "wrong"}, new String[] {"mallory", "alice-secret"}))
                {
                    try (Admin admin = Admin.create(withTimeouts(sasl(broker, credentials[0], credentials[1]))))
                    {
                        final ExecutionException ex = assertThrows(ExecutionException.class,
                            () -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS));
                        assertInstanceOf(SaslAuthenticationException.class, ex.getCause());
                        assertEquals("Authentication failed: Invalid username or password", ex.getCause().getMessage());
                    }
                    try (KafkaProducer<byte[], byte[]> refused = broker.producer(sasl(broker, credentials[0], credentials[1])))
                    {
                        final ExecutionException ex = assertThrows(ExecutionException.class,
                            () -> refused.send(new ProducerRecord<>("shared", new byte[1])).get(30, TimeUnit.SECONDS));
                        assertInstanceOf(SaslAuthenticationException.class, ex.getCause());
                    }
                }
                // the authenticated producer's connection was never touched
                healthy.send(new ProducerRecord<>("shared", "after".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * What Kafka 4.4's SaslServerAuthenticator does with a client that does not authenticate: ApiVersions is answered,
     * any other request closes the connection unanswered; a mechanism the listener lacks is UNSUPPORTED_SASL_MECHANISM
     * with the ones it has, then the close; SaslHandshake v0 and a bare token authenticate (an empty token back), after
     * which requests are served; after authentication another SaslAuthenticate is ILLEGAL_SASL_STATE.
     */
    @Test
    void rawClientsOnTheSaslPortGetKafkasBehaviour() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, saslBroker()))
        {
            final int port = saslPort(broker);
            try (RawClient raw = new RawClient(port))
            {
                final ApiVersionsResponseData versions = raw.apiVersions();
                assertEquals(1, versions.apiKeys().find(ApiKeys.SASL_HANDSHAKE.id).maxVersion());
                assertEquals(2, versions.apiKeys().find(ApiKeys.SASL_AUTHENTICATE.id).maxVersion());
                raw.send(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(null));
                raw.assertClosedUnanswered("closed");
            }
            try (RawClient raw = new RawClient(port))
            {
                final SaslHandshakeResponseData answer = new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(
                    ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-256"))), (short)1);
                assertEquals(Errors.UNSUPPORTED_SASL_MECHANISM.code(), answer.errorCode());
                assertEquals(List.of("PLAIN"), answer.mechanisms());
                raw.assertClosedUnanswered("closed");
            }
            try (Socket socket = new Socket("127.0.0.1", port))
            {
                socket.setSoTimeout(20_000);
                final RawClient raw = new RawClient(socket);
                final SaslHandshakeResponseData answer = new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(
                    ApiKeys.SASL_HANDSHAKE, (short)0, new SaslHandshakeRequestData().setMechanism("PLAIN"))), (short)0);
                assertEquals(Errors.NONE.code(), answer.errorCode());
                final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                final byte[] token = "\0alice\0alice-secret".getBytes(StandardCharsets.UTF_8);
                out.writeInt(token.length);
                out.write(token);
                out.flush();
                assertEquals(0, new DataInputStream(socket.getInputStream()).readInt(), "an empty token back");
                final MetadataResponseData metadata = new MetadataResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.METADATA,
                    (short)12, new MetadataRequestData().setTopics(null))), (short)12);
                assertEquals(port, metadata.brokers().iterator().next().port());
            }
            try (RawClient raw = new RawClient(port))
            {
                assertEquals(Errors.NONE.code(), new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_HANDSHAKE,
                    (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"))), (short)1).errorCode());
                for (final short version : new short[] {0, 1, 2})
                {
                    final SaslAuthenticateResponseData answer = new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(
                        ApiKeys.SASL_AUTHENTICATE, version, new SaslAuthenticateRequestData().setAuthBytes(
                            "alice\0alice\0alice-secret".getBytes(StandardCharsets.UTF_8)))), version);
                    // the first authenticates (v0); the others come after it: ILLEGAL_SASL_STATE, as KafkaApis answers
                    assertEquals(version == 0 ? Errors.NONE.code() : Errors.ILLEGAL_SASL_STATE.code(), answer.errorCode(), "v" + version);
                }
            }
            // Kafka's PlainSaslServer reads at most 4 NUL-separated parts and says how many it got (javap of the 4.4 jar)
            for (final String[] token : new String[][] {{"no-separators", "1"}, {"a\0b", "2"}, {"a\0b\0c\0d", "4"}, {"a\0b\0c\0d\0e\0f", "4"}})
            {
                try (RawClient raw = new RawClient(port))
                {
                    raw.exchange(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
                    final SaslAuthenticateResponseData answer = new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(
                        ApiKeys.SASL_AUTHENTICATE, (short)2, new SaslAuthenticateRequestData().setAuthBytes(
                            token[0].getBytes(StandardCharsets.UTF_8)))), (short)2);
                    assertEquals(Errors.SASL_AUTHENTICATION_FAILED.code(), answer.errorCode());
                    assertEquals("Invalid SASL/PLAIN response: expected 3 tokens, got " + token[1], answer.errorMessage());
                    raw.assertClosedUnanswered("after the failure");
                }
            }
        }
    }

    /**
     * A kafka-clients producer configured for PLAINTEXT pointed at the SASL port: its ApiVersions is answered, its
     * Metadata closes the connection (Kafka 4.4's answer to a client that skips authentication), so it never learns the
     * topic and its send fails when {@code max.block.ms} runs out; a PLAINTEXT producer on the other listener goes on.
     */
    @Test
    void aPlaintextClientOnTheSaslPortNeverGetsMetadata() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, saslBroker());
             KafkaProducer<byte[], byte[]> wrongPort = broker.producer(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                 "127.0.0.1:" + saslPort(broker), ProducerConfig.MAX_BLOCK_MS_CONFIG, 3000));
             KafkaProducer<byte[], byte[]> plain = broker.producer(Map.of()))
        {
            final ExecutionException ex = assertThrows(ExecutionException.class,
                () -> wrongPort.send(new ProducerRecord<>("wrong-port", new byte[1])).get(30, TimeUnit.SECONDS));
            assertInstanceOf(org.apache.kafka.common.errors.TimeoutException.class, ex.getCause());
            plain.send(new ProducerRecord<>("wrong-port", new byte[1])).get(30, TimeUnit.SECONDS);
            assertEquals(1, consumeAll(broker.consumer(Map.of())).size());
        }
    }

    /** Garbage, a 100 MB frame, a truncated handshake and a bad bare token on the SASL port: each costs its connection only. */
    @Test
    void hostileInputCostsOnlyItsConnection() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, saslBroker()))
        {
            final int port = saslPort(broker);
            try (KafkaProducer<byte[], byte[]> healthy = broker.producer(sasl(broker, "alice", "alice-secret")))
            {
                healthy.send(new ProducerRecord<>("hostile", "before".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                final List<Socket> truncated = new ArrayList<>();
                for (final byte[] bytes : List.of(
                    new byte[] {0, 0, 0, 8, 0x7f, 0x7f, 1, 2, 3, 4, 5, 6}, // an unknown API
                    new byte[] {0x06, 0x40, 0, 0, 0, 17}, // 104 857 600 bytes declared: over sasl.server.max.receive.size
                    new byte[] {0, 0, 0, 3, 1, 2, 3})) // shorter than a request header
                {
                    try (Socket socket = new Socket("127.0.0.1", port))
                    {
                        socket.setSoTimeout(20_000);
                        final long start = System.nanoTime();
                        socket.getOutputStream().write(bytes);
                        RawClient.assertClosedUnanswered(socket, "closed");
                        if (bytes[0] == 0x06)
                        {
                            // Kafka fails the authentication of an oversized frame: the close waits for the 100 ms delay
                            // (a lower bound the broker guarantees, whatever the load; the broker reads the frame after the write)
                            final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                            assertTrue(waitedMs >= 95, "closed after the failed-authentication delay, not at once: " + waitedMs + " ms");
                        }
                    }
                }
                for (int i = 0; i < 20; i++)
                {
                    final Socket socket = new Socket("127.0.0.1", port);
                    // a handshake cut short: its size and half its header, then nothing
                    socket.getOutputStream().write(new byte[] {0, 0, 0, 30, 0, 17, 0, 1, 0});
                    truncated.add(socket);
                }
                try (Socket socket = new Socket("127.0.0.1", port))
                {
                    socket.setSoTimeout(20_000);
                    final RawClient raw = new RawClient(socket);
                    raw.exchange(ApiKeys.SASL_HANDSHAKE, (short)0, new SaslHandshakeRequestData().setMechanism("PLAIN"));
                    final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                    final byte[] token = "\0alice\0wrong".getBytes(StandardCharsets.UTF_8);
                    out.writeInt(token.length);
                    out.write(token);
                    out.flush();
                    RawClient.assertClosedUnanswered(socket, "a bare token that fails");
                }
                healthy.send(new ProducerRecord<>("hostile", "after".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                for (final Socket socket : truncated)
                {
                    socket.close();
                }
            }
            assertEquals(2, consumeAll(broker.consumer(sasl(broker, "alice", "alice-secret"))).size());
        }
    }

    /** librdkafka (kcat) authenticates with PLAIN, produces and consumes on the SASL listener. */
    @Test
    void kcatProducesAndConsumesOverSaslPlain() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, saslBroker()))
        {
            final String b = "127.0.0.1:" + saslPort(broker);
            final String[] auth = {"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=alice",
                "-X", "sasl.password=alice-secret"};
            final StringBuilder input = new StringBuilder();
            for (int i = 0; i < 5; i++)
            {
                input.append("k").append(i).append(":v").append(i).append('\n');
            }
            kcat(input.toString(), concat(new String[] {"kcat", "-b", b, "-P", "-t", "cat", "-K:"}, auth));
            final String consumed = kcat(null, concat(new String[] {"kcat", "-b", b, "-C", "-t", "cat", "-e", "-f", "%k=%s\\n"}, auth));
            final List<String> lines = new ArrayList<>();
            for (final String line : consumed.strip().split("\n"))
            {
                if (!line.startsWith("% "))
                {
                    lines.add(line);
                }
            }
            assertEquals(List.of("k0=v0", "k1=v1", "k2=v2", "k3=v3", "k4=v4"), lines, consumed);
        }
    }

    static String kcat(final String input, final String... command) throws IOException, InterruptedException
    {
        return ChildProcess.run(null, input, 60, "apt-get install kcat", command);
    }

    static String[] concat(final String[] a, final String[] b)
    {
        final String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    static Map<String, Object> withTimeouts(final Map<String, Object> config)
    {
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return config;
    }

    static List<String> consumeAll(final KafkaConsumer<byte[], byte[]> consumer)
    {
        try (consumer)
        {
            final List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(consumer.listTopics(Duration.ofSeconds(30)).keySet().stream().filter(t -> !t.startsWith("__"))
                .findFirst().orElseThrow(), Duration.ofSeconds(30)).forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
            return readAll(consumer, partitions);
        }
    }

    /** Every record of {@code partitions}, read from the start up to their end offsets as of now. */
    static List<String> readAll(final KafkaConsumer<byte[], byte[]> consumer, final List<TopicPartition> partitions)
    {
        final List<String> values = new ArrayList<>();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        final long end = consumer.endOffsets(partitions, Duration.ofSeconds(30)).values().stream().mapToLong(Long::longValue).sum();
        await(() ->
        {
            for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
            {
                values.add(new String(r.value(), StandardCharsets.UTF_8));
            }
            return values.size() >= end;
        }, Duration.ofSeconds(30), "every record read");
        return values;
    }
}
