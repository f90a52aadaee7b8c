package io.ferrite.broker.net;

import io.ferrite.broker.TestCertificates;
import io.ferrite.broker.api.Apis;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.ListenerSecurity;
import io.ferrite.broker.config.TlsSettings;
import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.broker.scram.ScramCredentials;
import org.agrona.concurrent.AgentInvoker;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLSocket;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The network thread's direct-memory budget comes back whole on every way a connection ends (tls review 1, M1): a
 * connection's first buffers ({@link DirectBudget#FIRST_BUFFERS}) and its TLS buffers ({@link TlsRecords}: the
 * handshake's, a request's, a spliced fetch region's) are taken from the budget and must all be given back, or enough
 * churn refuses every connection. Paths: the client closes (PLAINTEXT and SSL, after a spliced response made every TLS
 * buffer), the broker closes for bad input (a frame over the limit), a TLS handshake fails (bytes that are not TLS), a
 * SASL authentication fails (a wrong password over SASL_SSL), an idle connection expires
 * ({@code connections.max.idle.ms}), a SASL session ends ({@code connections.max.reauth.ms}), and the thread shuts down.
 * Not driven: a connection refused at accept, and a registration that fails after its budget was taken
 * ({@code Connections}' hand-over; tls18b review L1).
 *
 * <p>One network thread with four listeners (PLAINTEXT, SSL, SASL_SSL whose PLAIN sessions last {@value #SESSION_MS}
 * ms, and an SSL one whose connections expire after {@value #IDLE_MS} ms idle), all stepped by this thread
 * ({@link AgentInvoker}); the clients are blocking sockets on a helper thread, and this thread steps the broker until the
 * client is done. After each path, once the thread holds no connection, its budget's {@code used()} is 0 again: read on
 * the thread that steps the network thread, so no race.
 */
class DirectBudgetReturnTest
{
    private static final int ROUNDS = 20;
    private static final int MAX_REQUEST_BYTES = 1 << 20;
    /** A spliced region of a few TLS records: read into the file chunk and wrapped a record at a time. */
    private static final int REGION = 100 * 1024;
    /** Long enough that a loaded machine finishes a handshake within it; the idle path waits this long, three times. */
    private static final long IDLE_MS = 2_000;
    private static final long SESSION_MS = 1_000;
    /** Generous: a loaded two-core machine runs a cold JVM's first requests slowly; a client that hangs still fails. */
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);

    @TempDir
    static Path dir;

    private final ExecutorService client = Executors.newSingleThreadExecutor();
    private final List<Throwable> escaped = new ArrayList<>();
    private TestCertificates certs;
    private FileChannel region;
    private NetworkThread thread;
    private AgentInvoker threadInvoker;
    private final List<AgentInvoker> acceptors = new ArrayList<>();
    private final Map<String, Integer> ports = new java.util.HashMap<>();

    @BeforeEach
    void start() throws Exception
    {
        certs = TestCertificates.shared();
        final Path file = dir.resolve("region-" + System.nanoTime());
        final byte[] bytes = new byte[REGION];
        java.util.Arrays.fill(bytes, (byte)'r');
        Files.write(file, bytes);
        region = FileChannel.open(file, StandardOpenOption.READ);
        final Apis apis = new Apis();
        // Metadata is answered with the file region spliced in (as a fetch's records are): TLS reads it into its chunk
        final RequestHandler handler = (api, version, in, offset, limit, out, outOffset, connection) ->
        {
            if (api == io.ferrite.wire.message.ApiKeys.METADATA)
            {
                connection.splice(outOffset, region, 0, REGION);
                return outOffset;
            }
            return apis.handle(api, version, in, offset, limit, out, outOffset, connection);
        };
        thread = new NetworkThread(0, handler, MAX_REQUEST_BYTES, NetworkCounters.detached(), 64L << 20);
        threadInvoker = new AgentInvoker(escaped::add, null, thread);
        threadInvoker.start();
        final TlsEngines engines = engines();
        listen("PLAINTEXT", Listener.PLAINTEXT);
        listen("SSL", new Listener("SSL", "SSL", List.of(), Map.of(), new ScramCredentials(), 0, engines));
        listen("SASL_SSL", new Listener("SASL_SSL", "SASL_SSL", List.of("PLAIN"), Map.of("alice", "alice-secret"), new ScramCredentials(),
            0, engines, Listener.DEFAULT_IDLE_MS, SaslAuthenticator.MAX_RECEIVE_SIZE, Map.of("PLAIN", SESSION_MS)));
        listen("IDLE", new Listener("IDLE", "SSL", List.of(), Map.of(), new ScramCredentials(), 0, engines, IDLE_MS,
            SaslAuthenticator.MAX_RECEIVE_SIZE));
    }

    private TlsEngines engines() throws Exception
    {
        final BrokerConfig config = BrokerConfig.of(Map.of("listeners", "SSL://127.0.0.1:0", "log.dir", dir.resolve("logs").toString(),
            "ssl.keystore.type", "PKCS12", "ssl.keystore.location", certs.store("broker").toString(), "ssl.keystore.password",
            TestCertificates.PASSWORD));
        final TlsSettings.Server server = TlsSettings.server(config, ListenerSecurity.brokerListeners(config).get(0));
        return new TlsEngines(server.context(), server.protocols(), server.cipherSuites(), server.clientAuth());
    }

    private void listen(final String name, final Listener listener) throws IOException
    {
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {thread}, listener);
        ports.put(name, acceptor.address().getPort());
        final AgentInvoker invoker = new AgentInvoker(escaped::add, null, acceptor);
        invoker.start();
        acceptors.add(invoker);
    }

    @AfterEach
    void stop() throws IOException
    {
        client.shutdownNow();
        acceptors.forEach(AgentInvoker::close);
        threadInvoker.close();
        region.close();
    }

    @Test
    void theBudgetComesBackOnEveryWayAConnectionEnds() throws Exception
    {
        for (int i = 0; i < ROUNDS; i++)
        {
            run("a PLAINTEXT client closes", () ->
            {
                try (Socket socket = plain("PLAINTEXT"))
                {
                    assertEquals(REGION, metadata(socket, 1), "the spliced region");
                }
            });
            run("an SSL client closes after a spliced response", () ->
            {
                try (Socket socket = tls("SSL"))
                {
                    apiVersions(socket, 1);
                    assertEquals(REGION, metadata(socket, 2), "the spliced region, encrypted");
                }
            });
            run("the broker closes a PLAINTEXT connection for a frame over the limit", () ->
            {
                try (Socket socket = plain("PLAINTEXT"))
                {
                    oversizedFrame(socket);
                    assertClosedByBroker(socket);
                }
            });
            run("the broker closes an SSL connection for a frame over the limit", () ->
            {
                try (Socket socket = tls("SSL"))
                {
                    apiVersions(socket, 1);
                    oversizedFrame(socket);
                    assertClosedByBroker(socket);
                }
            });
            run("a TLS handshake fails: bytes that are not TLS", () ->
            {
                try (Socket socket = plain("SSL"))
                {
                    final byte[] garbage = "GET / HTTP/1.1\r\nHost: ferrite\r\n\r\n".repeat(8).getBytes(StandardCharsets.US_ASCII);
                    socket.getOutputStream().write(garbage);
                    assertClosedByBroker(socket);
                }
            });
            run("a SASL authentication fails over SASL_SSL", () ->
            {
                try (Socket socket = tls("SASL_SSL"))
                {
                    final SaslAuthenticateResponseData answer = plainLogin(socket, "wrong-secret");
                    assertEquals(Errors.SASL_AUTHENTICATION_FAILED.code(), answer.errorCode());
                    assertClosedByBroker(socket);
                }
            });
        }
        // fewer rounds of the paths that wait for a clock: each costs its bound in real time
        for (int i = 0; i < 3; i++)
        {
            run("an idle SSL connection expires", () ->
            {
                try (Socket socket = tls("IDLE")) // the handshake made its TLS buffers
                {
                    assertClosedByBroker(socket); // nothing sent after it: connections.max.idle.ms closes it
                }
            });
            run("a SASL_SSL session ends", () ->
            {
                try (Socket socket = tls("SASL_SSL"))
                {
                    assertEquals(Errors.NONE.code(), plainLogin(socket, "alice-secret").errorCode());
                    // past the session's end (it began before the answer came); no request between, which a loaded
                    // machine might deliver after the end too
                    Thread.sleep(SESSION_MS + 50);
                    send(socket, new ApiVersionsRequest.Builder().build((short)3), ApiKeys.API_VERSIONS, 4);
                    assertClosedByBroker(socket); // the first request after the end closes the connection
                }
            });
        }
        final long before = thread.stats().saslSessionsEnded();
        assertTrue(before >= 3, "the sessions ended as sessions (" + before + "), not otherwise");

        // shutdown: connections open, with every TLS buffer made, when the thread closes
        final List<Socket> open = new ArrayList<>();
        for (final String listener : new String[] {"PLAINTEXT", "SSL", "SSL"})
        {
            final Socket socket = "PLAINTEXT".equals(listener) ? plain(listener) : client(() -> tls(listener));
            open.add(socket);
            final Future<Integer> answer = client.submit(() -> metadata(socket, 1));
            assertEquals(REGION, (int)stepUntilDone(answer, "the spliced answer on an open connection"));
        }
        assertTrue(thread.directBudgetUsed() > 0, "the open connections hold their buffers");
        threadInvoker.close(); // onClose: every connection closed
        assertEquals(0, thread.directBudgetUsed(), "the budget after the thread closed with " + open.size() + " connections open");
        for (final Socket socket : open)
        {
            socket.close();
        }
        assertEquals(List.of(), escaped, "errors that escaped a pass");
    }

    /** Runs {@code path} on the client thread while this thread steps the broker; then every byte of the budget is back. */
    private void run(final String path, final ClientPath clientPath) throws Exception
    {
        final Future<?> done = client.submit(() ->
        {
            clientPath.run();
            return null;
        });
        stepUntilDone(done, path);
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (thread.connections() != 0)
        {
            step();
            assertTrue(System.nanoTime() < deadline, path + ": connections still open: " + thread.connections());
        }
        assertEquals(0, thread.directBudgetUsed(), path + ": direct memory still counted with no connection open");
        assertEquals(List.of(), escaped, path + ": errors that escaped a pass");
    }

    private <T> T stepUntilDone(final Future<T> done, final String what) throws Exception
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!done.isDone())
        {
            step();
            if (System.nanoTime() > deadline)
            {
                final StringBuilder stacks = new StringBuilder();
                Thread.getAllStackTraces().forEach((t, frames) ->
                {
                    if (t.getName().startsWith("pool-"))
                    {
                        stacks.append(t.getName()).append('\n');
                        for (final StackTraceElement frame : frames)
                        {
                            stacks.append("  ").append(frame).append('\n');
                        }
                    }
                });
                done.cancel(true);
                fail(what + ": the client did not finish; connections " + thread.connections() + ", client:\n" + stacks);
            }
        }
        return done.get();
    }

    private <T> T client(final Callable<T> call) throws Exception
    {
        return stepUntilDone(client.submit(call), "connecting");
    }

    private void step()
    {
        int work = threadInvoker.invoke();
        for (final AgentInvoker acceptor : acceptors)
        {
            work += acceptor.invoke();
        }
        if (work == 0)
        {
            Thread.yield(); // the kernel may have what the next pass needs
        }
    }

    private Socket plain(final String listener) throws IOException
    {
        final Socket socket = new Socket("127.0.0.1", ports.get(listener));
        socket.setSoTimeout(10_000);
        return socket;
    }

    /** A TLS client of {@code listener}, its handshake done (on the client thread: the broker is stepped meanwhile). */
    private Socket tls(final String listener) throws Exception
    {
        final SSLSocket socket = (SSLSocket)certs.clientContext(null).getSocketFactory().createSocket("127.0.0.1", ports.get(listener));
        socket.setSoTimeout(10_000);
        socket.startHandshake();
        return socket;
    }

    private static void apiVersions(final Socket socket, final int correlationId) throws IOException
    {
        send(socket, new ApiVersionsRequest.Builder().build((short)3), ApiKeys.API_VERSIONS, correlationId);
        receive(socket, ApiKeys.API_VERSIONS, (short)3, correlationId);
    }

    /** A Metadata request answered with the spliced region: the bytes after the response header. */
    private static int metadata(final Socket socket, final int correlationId) throws IOException
    {
        send(socket, new MetadataRequest.Builder(new MetadataRequestData().setTopics(null)).build((short)12), ApiKeys.METADATA, correlationId);
        return receive(socket, ApiKeys.METADATA, (short)12, correlationId).remaining();
    }

    /** A PLAIN exchange for alice (SaslHandshake v1, SaslAuthenticate v2) with {@code password}: the SaslAuthenticate answer. */
    private static SaslAuthenticateResponseData plainLogin(final Socket socket, final String password) throws IOException
    {
        send(socket, new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("PLAIN")).build((short)1),
            ApiKeys.SASL_HANDSHAKE, 1);
        receive(socket, ApiKeys.SASL_HANDSHAKE, (short)1, 1);
        send(socket, new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(
            ("\0alice\0" + password).getBytes(StandardCharsets.UTF_8))).build((short)2), ApiKeys.SASL_AUTHENTICATE, 2);
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(receive(socket, ApiKeys.SASL_AUTHENTICATE, (short)2, 2)), (short)2);
    }

    /** A frame whose size is over the broker's limit, and a few of its bytes. */
    private static void oversizedFrame(final Socket socket) throws IOException
    {
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(MAX_REQUEST_BYTES + 1);
        out.write(new byte[16]);
        out.flush();
    }

    private static void send(final Socket socket, final AbstractRequest request, final ApiKeys api, final int correlationId)
        throws IOException
    {
        final ByteBuffer frame = request.serializeWithHeader(new RequestHeader(api, request.version(), "budget", correlationId));
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(frame.remaining());
        out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
        out.flush();
    }

    /** The answer to {@code correlationId}, positioned after its header. */
    private static ByteBuffer receive(final Socket socket, final ApiKeys api, final short version, final int correlationId)
        throws IOException
    {
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        final ByteBuffer answer = ByteBuffer.wrap(bytes);
        assertEquals(correlationId, ResponseHeader.parse(answer, api.responseHeaderVersion(version)).correlationId());
        return answer;
    }

    /** The broker closed the connection: the stream ends (after at most a TLS alert or close_notify) or is reset. */
    private static void assertClosedByBroker(final Socket socket) throws IOException
    {
        try
        {
            final byte[] rest = new byte[4096];
            int read = 0;
            int n;
            while ((n = socket.getInputStream().read(rest)) >= 0)
            {
                read += n;
                assertTrue(read < 64 * 1024, "the broker answered instead of closing the connection");
            }
        }
        catch (final EOFException | SocketException closed)
        {
            // ended, or reset: closed
        }
        catch (final javax.net.ssl.SSLException closed)
        {
            // the TLS layer met the close (an alert, or the end of the stream without close_notify)
        }
    }

    /** What the client thread does on one path. */
    @FunctionalInterface
    private interface ClientPath
    {
        void run() throws Exception;
    }
}
