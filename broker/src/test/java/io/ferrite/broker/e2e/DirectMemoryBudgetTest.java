package io.ferrite.broker.e2e;

import io.ferrite.broker.TestCertificates;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ferrite.broker.e2e.DirectMemoryExhaustionTest.tail;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The network thread's direct-memory budget (tls review 1, M1): a child broker with {@code -XX:MaxDirectMemorySize} of
 * {@value #DIRECT_LIMIT} and one network thread, whose GC log the test reads. Connections on its SSL listener send a
 * ClientHello each and wait (the broker holds the handshake's buffers) until one is closed, out of direct memory; then a
 * burst of {@value #BURST} more connections that are refused (at accept, or at their first TLS buffer) while a PLAINTEXT
 * client's ApiVersions and an SSL producer's sends, both connected before, go on between them. Every refusal was the
 * budget's: nothing asked the JDK for direct memory it did not have, whose refusal ({@code java.nio.Bits.reserveMemory})
 * calls {@code System.gc()} and sleeps up to about half a second on the network thread before it throws, so the GC
 * log has no "System.gc()" collection. Before the budget, each refusal was the JDK's: one such collection each.
 * Timing is not asserted; every wait is bounded (30 s reads, 60 s sends).
 */
class DirectMemoryBudgetTest
{
    private static final String DIRECT_LIMIT = "8m";
    private static final int BURST = 20;
    private static final Pattern OUT_OF_DIRECT_MEMORY = Pattern.compile("out of direct memory");

    @TempDir
    Path dir;

    @Test
    void refusalsCostTheThreadNoCollectionAndItsClientsAreServedThroughABurst() throws Exception
    {
        final TestCertificates certs = TestCertificates.shared();
        final Path gcLog = dir.resolve("gc.log");
        final ServerCommand.Running server = DirectMemoryExhaustionTest.startWithSsl(dir, certs,
            "-XX:MaxDirectMemorySize=" + DIRECT_LIMIT + " -Xlog:gc:file=" + gcLog);
        final List<Socket> clients = new ArrayList<>();
        try
        {
            final int sslPort = DirectMemoryExhaustionTest.sslPort(server);
            final byte[] clientHello = DirectMemoryExhaustionTest.clientHello(certs);
            try (RawClient plain = new RawClient(server.port());
                 KafkaProducer<byte[], byte[]> producer = sslProducer(certs, sslPort))
            {
                plain.apiVersions();
                send(producer, "before"); // its TLS buffers made while the budget lasts

                int held = 0;
                while (held(clients, sslPort, clientHello))
                {
                    held++;
                    assertTrue(held < 5_000, "the budget never ran out after " + held + " handshakes");
                }
                assertTrue(server.stderr().contains("out of direct memory"), "the closed connection said why:\n" + tail(server.stderr()));
                final int refusedBefore = count(server.stderr());

                int refused = 0;
                for (int attempt = 0; refused < BURST; attempt++)
                {
                    assertTrue(attempt < 500, "only " + refused + " of " + attempt + " connections refused once the budget was used up");
                    if (!held(clients, sslPort, clientHello))
                    {
                        refused++;
                    }
                    plain.apiVersions(); // the thread's other connections are served between the refusals
                    send(producer, "during-" + attempt);
                }
                System.out.println(held + " handshakes held until the budget ran out, then " + refused + " connections refused");
                assertTrue(count(server.stderr()) >= refusedBefore + BURST, "each refusal said so:\n" + tail(server.stderr()));
                assertFalse(server.stderr().contains("OutOfMemoryError"), tail(server.stderr()));
            }
            final String gc = Files.readString(gcLog, StandardCharsets.UTF_8);
            assertFalse(gc.contains("System.gc()"), "a refusal asked the JDK for direct memory (Bits.reserveMemory's System.gc()):\n" + gc);
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

    /**
     * A connection to {@code port} that sends {@code clientHello}: true when the broker answers it (the handshake's
     * buffers made and held, the socket kept in {@code clients}), false when it is closed (refused).
     */
    private static boolean held(final List<Socket> clients, final int port, final byte[] clientHello) throws Exception
    {
        final Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(30_000);
        clients.add(socket);
        try
        {
            socket.getOutputStream().write(clientHello);
            return socket.getInputStream().read() >= 0;
        }
        catch (final SocketException closed) // reset: refused at accept before the hello was read
        {
            return false;
        }
    }

    private static KafkaProducer<byte[], byte[]> sslProducer(final TestCertificates certs, final int sslPort)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + sslPort);
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        c.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        c.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.brokerPem().toString());
        c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
        return new KafkaProducer<>(c);
    }

    private static void send(final KafkaProducer<byte[], byte[]> producer, final String value) throws Exception
    {
        final long offset = producer.send(new ProducerRecord<>("served", 0, null, value.getBytes(StandardCharsets.UTF_8)))
            .get(60, TimeUnit.SECONDS).offset();
        assertTrue(offset >= 0, value);
    }

    private static int count(final String log)
    {
        final Matcher m = OUT_OF_DIRECT_MEMORY.matcher(log);
        int n = 0;
        while (m.find())
        {
            n++;
        }
        return n;
    }
}
