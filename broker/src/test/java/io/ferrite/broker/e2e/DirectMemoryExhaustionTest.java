package io.ferrite.broker.e2e;

import io.ferrite.broker.ClosedByBroker;
import io.ferrite.broker.TestCertificates;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM's direct memory used up (tls review M4): a child broker with {@code -XX:MaxDirectMemorySize} of
 * {@value #DIRECT_LIMIT} (about 500 waiting handshakes fill its network thread's budget, three quarters of it: {@code DirectBudget}; about 630 filled it before the budget) and one network thread. Connections on its SSL listener each
 * send a ClientHello and wait (the
 * broker holds its answer's buffers, about 19 KB) until a buffer cannot be had: that connection is closed with one
 * WARN line. Then connections that send nothing until one cannot get the buffers a connection needs at accept: it is
 * refused (closed: its client reads the end of the stream), counted, one WARN line. The budget used up, the JDK still has
 * about a quarter: PLAINTEXT connections made before send parts of requests (input growth is not budgeted: tls18 review 1,
 * M2) until the JDK refuses ("Cannot reserve ..."), in steps of smaller parts so that little is left, and then an
 * all-topics Metadata whose answer must grow its connection's output is refused by the JDK: that connection is closed
 * with one WARN line, the thread serves on (tls18 review 1, H1: with the budget alone the Metadata was answered).
 * The network thread never met an OutOfMemoryError (before: it escaped a pass and ended the thread, and every socket
 * accepted after was left open, never read); once the clients close, the broker holds no socket of theirs, and a
 * kafka-clients producer and consumer over SSL are served.
 */
@Tag("slow") // fault injection in a child JVM (its direct memory used up), as the crash tests: about a minute at any size
class DirectMemoryExhaustionTest
{
    private static final String DIRECT_LIMIT = "12m";
    private static final Pattern REFUSED = Pattern.compile("refusing connection from /127\\.0\\.0\\.1:(\\d+): out of direct memory");

    @TempDir
    Path dir;

    @Test
    void usedUpDirectMemoryCostsOnlyTheConnectionsThatAskedAndTheThreadServesOn() throws Exception
    {
        final TestCertificates certs = TestCertificates.shared();
        final ServerCommand.Running server = startWithSsl(dir, certs, "-XX:MaxDirectMemorySize=" + DIRECT_LIMIT);
        final List<Socket> clients = new ArrayList<>();
        try
        {
            final int sslPort = sslPort(server);
            final long pid = server.process().pid();
            final long baseline = sockets(pid);

            final byte[] clientHello = clientHello(certs);
            createTopics(server.port()); // an all-topics Metadata is then answered with ~50 KB: see TOPICS
            final RawClient probe = new RawClient(server.port()); // made while memory lasts; paces the steps below
            final RawClient asker = new RawClient(server.port()); // a PLAINTEXT client made while memory lasts (review H1)
            asker.apiVersions();
            final List<Socket> fillers = new ArrayList<>(); // PLAINTEXT, made while the budget lasts: their input grows outside it
            for (int i = 0; i < FILLERS; i++)
            {
                final Socket filler = new Socket("127.0.0.1", server.port());
                clients.add(filler);
                fillers.add(filler);
            }
            probe.apiVersions();
            int handshakes = 0;
            while (true)
            {
                assertTrue(handshakes < 5_000, "direct memory never ran out after " + handshakes + " handshakes");
                final Socket socket = new Socket("127.0.0.1", sslPort);
                socket.setSoTimeout(30_000);
                clients.add(socket);
                handshakes++;
                int first;
                try
                {
                    socket.getOutputStream().write(clientHello);
                    first = socket.getInputStream().read(); // the broker's answer: its buffers made and held while it waits
                }
                catch (final java.net.SocketException closed)
                {
                    first = -1;
                }
                if (first < 0)
                {
                    break; // closed by the broker: a buffer of it could not be had
                }
            }
            assertTrue(server.stderr().contains("out of direct memory"), "the connection closed for it said so");
            Matcher refused = REFUSED.matcher(server.stderr());
            int idle = 0;
            while (!refused.find())
            {
                assertTrue(idle < 2_000, "no connection refused at accept after " + idle + " more:\n" + tail(server.stderr()));
                final Socket socket = new Socket("127.0.0.1", sslPort);
                socket.setSoTimeout(30_000);
                clients.add(socket);
                idle++;
                probe.apiVersions(); // two passes of the network thread after the accept: the connection was taken over
                probe.apiVersions();
                refused = REFUSED.matcher(server.stderr());
            }
            // the budget used up, the JDK still has some MiB (the budget is three quarters of it): input growth is not
            // budgeted (review M2), so the fillers' partial requests use up the rest, in smaller and smaller steps, until
            // the JDK refuses a growth of the smallest kind (tls18 review 1, H1)
            final int before = jdkRefusals(server.stderr());
            int next = 0;
            int jdkRefused = before;
            for (final int body : FILL_STEPS)
            {
                final int refusedBefore = jdkRefused;
                while (jdkRefused == refusedBefore)
                {
                    assertTrue(next < fillers.size(), "the JDK never refused an input growth of " + body + " bytes:\n" + tail(server.stderr()));
                    fill(fillers.get(next++), body, probe);
                    jdkRefused = jdkRefusals(server.stderr());
                }
            }
            System.out.println("the JDK refused " + (jdkRefused - before) + " input growths over " + next + " fillers");
            // review H1: an ordinary request whose answer must grow the connection's output past what the JDK has left:
            // it costs that connection only (closed, one WARN line with the JDK's reason, counted), never the thread
            final boolean answered = metadataOfAllTopics(asker);
            probe.apiVersions();
            assertFalse(server.stderr().contains("OutOfMemoryError"), "no OutOfMemoryError ended the network thread:\n" + tail(server.stderr()));
            assertFalse(answered, "the Metadata asked with the JDK's direct memory used up was answered:\n" + tail(server.stderr()));
            assertEquals(jdkRefused + 1, jdkRefusals(server.stderr()), "its connection closed with one WARN line giving the JDK's reason:\n" + tail(server.stderr()));
            System.out.println("the Metadata asked with the JDK's direct memory used up: its connection closed");
            asker.close();
            probe.apiVersions();
            probe.close();
            System.out.println(handshakes + " handshakes left waiting, then " + idle + " connections that sent nothing, until one was refused at accept");
            final int refusedPort = Integer.parseInt(refused.group(1));
            final Socket refusedClient = clients.stream().filter(s -> s.getLocalPort() == refusedPort).findFirst().orElse(null);
            assertNotNull(refusedClient, "the refused connection is one of the test's");
            refusedClient.setSoTimeout(30_000);
            ClosedByBroker.assertClosedByBroker(refusedClient); // closed, not left open
            final String log = server.stderr();
            assertFalse(log.contains("OutOfMemoryError"), "no OutOfMemoryError reached the network thread:\n" + tail(log));

            for (final Socket socket : clients)
            {
                socket.close();
            }
            clients.clear();
            final long[] now = new long[1];
            await(() -> (now[0] = sockets(pid)) <= baseline, Duration.ofSeconds(60),
                () -> "the broker holds no socket of the closed clients: " + baseline + " before, " + now[0] + " now");

            produceAndConsumeOverSsl(certs, sslPort);
        }
        finally
        {
            for (final Socket socket : clients)
            {
                socket.close();
            }
            server.stop();
        }
    }

    /** A child broker with one network thread, a PLAINTEXT and an SSL listener, and {@code jvmOptions} (JAVA_TOOL_OPTIONS). */
    static ServerCommand.Running startWithSsl(final Path dir, final TestCertificates certs, final String jvmOptions) throws Exception
    {
        return ServerCommand.start(dir, Map.of("JAVA_TOOL_OPTIONS", jvmOptions),
            "--override", "log.dir=" + dir.resolve("data"),
            "--override", "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
            "--override", "ssl.keystore.type=PKCS12",
            "--override", "ssl.keystore.location=" + certs.store("broker"),
            "--override", "ssl.keystore.password=" + TestCertificates.PASSWORD,
            "--override", "num.network.threads=1");
    }

    /** The port of {@code server}'s SSL listener, from the line that says where it listens. */
    static int sslPort(final ServerCommand.Running server)
    {
        final Matcher ssl = Pattern.compile("SSL://127\\.0\\.0\\.1:(\\d+)").matcher(server.listening());
        assertTrue(ssl.find(), server.listening());
        return Integer.parseInt(ssl.group(1));
    }

    /**
     * Topics whose names make an all-topics Metadata answer of about 50 KB (each topic about 250 bytes): more than the
     * JDK can have left once it refused the fillers' smallest input growth (a filled 256-byte input asks for 32 KiB
     * more, about 33 KB in all; the connection it closed gives back its 1.3 KB). With 100 topics of 66-character names
     * (14 KB) the answer fitted in what was left once in CI, and was answered.
     */
    private static final int TOPICS = 200;
    private static final String NAME_PADDING = "-padding".repeat(18);

    /** PLAINTEXT connections that send part of a large request, each held open. */
    private static final int FILLERS = 200;

    /** The bytes of a request's body the fillers send, step by step: each step until the JDK refuses one input growth. */
    private static final int[] FILL_STEPS = {192 * 1024, 16 * 1024, 1024};

    /** The JDK's refusal of a direct buffer, as the WARN line of the connection closed for it gives it. */
    private static final Pattern JDK_REFUSED = Pattern.compile("out of direct memory: Cannot reserve \\d+ bytes of direct buffer memory");

    private static int jdkRefusals(final String log)
    {
        final Matcher m = JDK_REFUSED.matcher(log);
        int n = 0;
        while (m.find())
        {
            n++;
        }
        return n;
    }

    /**
     * On {@code filler}: the size of a request of {@code body + 1} bytes (its input grows to about that, no more), then
     * {@code body} bytes of it in 8 KiB writes, each followed by a
     * request of {@code probe}'s (its answer: the network thread has passed over the filler's bytes). A filler closed by
     * the broker ends it.
     */
    private static void fill(final Socket filler, final int body, final RawClient probe) throws IOException
    {
        final byte[] chunk = new byte[8 * 1024];
        try
        {
            filler.getOutputStream().write(ByteBuffer.allocate(4).putInt(body + 1).array());
            for (int sent = 0; sent < body; sent += chunk.length)
            {
                filler.getOutputStream().write(chunk, 0, Math.min(chunk.length, body - sent));
                probe.apiVersions();
            }
        }
        catch (final java.net.SocketException closed)
        {
            // closed by the broker: its input could not grow
        }
        probe.apiVersions();
    }

    /** {@value #TOPICS} topics with long names, made while memory lasts. */
    private static void createTopics(final int port) throws Exception
    {
        try (Admin admin = Admin.create(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port)))
        {
            final List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < TOPICS; i++)
            {
                topics.add(new NewTopic(String.format("a-topic-with-a-long-name-so-that-the-metadata-answer-is-large-%03d", i) + NAME_PADDING, 1, (short)1));
            }
            admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Metadata v12 of all topics on {@code client}: true if answered with every topic, false if the broker closed the connection. */
    private static boolean metadataOfAllTopics(final RawClient client) throws IOException
    {
        final short version = 12;
        final int id = client.send(ApiKeys.METADATA, version, new MetadataRequestData().setTopics(null));
        final ByteBuffer body;
        try
        {
            body = client.receive(ApiKeys.METADATA, version, id);
        }
        catch (final java.io.EOFException | java.net.SocketException closed) // SocketTimeoutException (no answer, no close) fails
        {
            return false;
        }
        final MetadataResponseData response = new MetadataResponseData(new ByteBufferAccessor(body), version);
        assertEquals(TOPICS, response.topics().size(), "every topic answered");
        return true;
    }

    private static void produceAndConsumeOverSsl(final TestCertificates certs, final int sslPort) throws Exception
    {
        final Map<String, Object> ssl = new HashMap<>();
        ssl.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + sslPort);
        ssl.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        ssl.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        ssl.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.brokerPem().toString());
        final Map<String, Object> producerConfig = new HashMap<>(ssl);
        producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig))
        {
            for (int i = 0; i < 10; i++)
            {
                producer.send(new ProducerRecord<>("after-exhaustion", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)))
                    .get(60, TimeUnit.SECONDS);
            }
        }
        final Map<String, Object> consumerConfig = new HashMap<>(ssl);
        consumerConfig.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumerConfig.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig))
        {
            final List<String> read = SaslPlainTest.readAll(consumer, List.of(new TopicPartition("after-exhaustion", 0)));
            assertEquals(List.of("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"), read);
        }
    }

    /** A TLS client's first flight (its ClientHello), made once and sent on every connection: the broker cannot tell. */
    static byte[] clientHello(final TestCertificates certs) throws Exception
    {
        final javax.net.ssl.SSLEngine engine = certs.clientContext(null).createSSLEngine("127.0.0.1", 9093);
        engine.setUseClientMode(true);
        engine.beginHandshake();
        final ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        return java.util.Arrays.copyOf(out.array(), out.position());
    }

    /** The sockets process {@code pid} has open (its listeners' and its connections'). */
    private static long sockets(final long pid) throws IOException
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd")))
        {
            return fds.filter(fd ->
            {
                try
                {
                    return Files.readSymbolicLink(fd).toString().startsWith("socket:");
                }
                catch (final IOException gone)
                {
                    return false;
                }
            }).count();
        }
    }

    static String tail(final String log)
    {
        return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    }
}
